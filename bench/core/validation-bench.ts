/**
 * The edge's cost on the worst request shapes (`worst-shapes.ts`): what the Worker does to a
 * body besides JSON.parse (the structural budget scan, validation, canonicalisation and
 * hashing), in time and heap allocated, beside JSON.parse's own cost on the same body (the
 * platform's, for reference; the budget scan is what spares it on rejected bodies).
 * Targets from issue 9: at most 200 ms and 2x the body's size.
 */

import { quantile } from "../../sim/report/stats.ts";
import { formatTable } from "../../sim/report/table.ts";
import { promptKey } from "../../src/core/prompt/prompt-key.ts";
import {
  ApiError,
  chatRequest,
  completionRequest,
  exceedsJsonBudget,
  validateLlmRequest,
} from "../../src/worker/validation/index.ts";
import { allocatedBytes, tryGc } from "./heap.ts";
import { WORST_SHAPES } from "./worst-shapes.ts";

export interface ShapeResult extends Record<string, string | number> {
  shape: string;
  "body MB": number;
  outcome: string;
  "edge ms": number;
  "edge MB": number;
  "edge x body": number;
  "JSON.parse ms": number;
  "JSON.parse MB": number;
}

const MB = 1024 * 1024;
const RUNS = 5;

/** The Worker's path minus decoding and JSON.parse (its `jsonBody` step): the outcome. */
function edge(
  text: string,
  body: Record<string, unknown>,
  schema: typeof chatRequest | typeof completionRequest,
): string {
  const over = exceedsJsonBudget(text);
  if (over) return `400 ${over.field ?? "body"}: ${over.reason}`;
  try {
    const request = validateLlmRequest(body, schema);
    return `routed, ${promptKey(request).chunkHashes.length} chunks`;
  } catch (error) {
    if (error instanceof ApiError) return `${error.status} ${error.message}`;
    throw error;
  }
}

const median = (samples: number[]) =>
  quantile(
    samples.sort((a, b) => a - b),
    0.5,
  );

function millis(run: () => unknown): number {
  const start = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export function benchWorstShapes(): ShapeResult[] {
  const gc = tryGc();
  const results: ShapeResult[] = [];
  for (const shape of WORST_SHAPES) {
    const bytes = new TextEncoder().encode(shape.body());
    const schema = shape.route === "chat" ? chatRequest : completionRequest;
    let text = "";
    let body: Record<string, unknown> = {};
    let parseMs = 0;
    const parseBytes = allocatedBytes(() => {
      parseMs = millis(() => {
        text = new TextDecoder().decode(bytes);
        body = JSON.parse(text);
      });
    }, gc);
    const outcome = edge(text, body, schema);
    const samples = Array.from({ length: RUNS }, () => millis(() => edge(text, body, schema)));
    const edgeBytes = allocatedBytes(() => edge(text, body, schema), gc);
    results.push({
      shape: shape.name,
      "body MB": bytes.length / MB,
      outcome,
      "edge ms": median(samples),
      "edge MB": edgeBytes / MB,
      "edge x body": edgeBytes / bytes.length,
      "JSON.parse ms": parseMs,
      "JSON.parse MB": parseBytes / MB,
    });
    text = "";
    body = {};
  }
  return results;
}

const COLUMNS = [
  "shape",
  "body MB",
  "edge ms",
  "edge MB",
  "edge x body",
  "JSON.parse ms",
  "JSON.parse MB",
  "outcome",
] as const;

const figure = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(2) : v.toPrecision(3));

/** One row per shape: names left-aligned, figures right-aligned. */
export function printWorstShapes(title: string, results: readonly ShapeResult[]): void {
  const rows = results.map((r) =>
    COLUMNS.map((c) => (typeof r[c] === "number" ? figure(r[c]) : String(r[c]))),
  );
  const align = COLUMNS.map((_, i) => (i === 0 || i === COLUMNS.length - 1 ? "left" : "right"));
  console.log(`\n${title}`);
  console.log(formatTable(rows, { header: COLUMNS, align }));
}
