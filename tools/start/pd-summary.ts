/**
 * What `npm start -- --pd` adds below its table: per pool, how the router served requests
 * (`x-router-pd`'s reasons as the pool's object counted them) and how many prefill legs failed,
 * read from `/admin/state`.
 */

import { formatTable } from "../../sim/report/table.ts";
import type { RouterStats } from "../../src/core/router/router-types.ts";
import type { Stack } from "../local-stack/stack.ts";

const REASONS = ["remote", "local-cached", "prefill-busy", "no-prefill-origin", "n>1"] as const;

export async function pdSummary(stack: Stack, models: readonly string[]): Promise<string> {
  const rows: string[][] = [];
  for (const model of models) {
    const res = await fetch(`${stack.routerUrl}/admin/state?model=${model}`, {
      headers: { authorization: `Bearer ${stack.secrets.ADMIN_TOKEN}` },
    });
    const { pd } = ((await res.json()) as { object: { router: RouterStats } }).object.router;
    const by = pd.byReason as Record<string, number | undefined>;
    rows.push([model, ...REASONS.map((r) => String(by[`pd:${r}`] ?? 0)), String(pd.prefillFailed)]);
  }
  return formatTable(rows, { header: ["pool", ...REASONS, "prefill failed"] });
}
