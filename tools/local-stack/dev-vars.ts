/**
 * The local stack's secrets: `.dev.vars` in the project root (git-ignored), created with random
 * tokens on first use and read back after. wrangler dev loads it; the stack reads the same file
 * to call the admin API and sign webhooks, so the tokens are never printed or typed.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

export interface DevSecrets {
  ADMIN_TOKEN: string;
  WEBHOOK_SECRET: string;
}

function parse(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^\s*([A-Z_][A-Z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (m) out[m[1] as string] = (m[2] as string).replace(/^"(.*)"$/, "$1");
  }
  return out;
}

/** Read `path`, creating it (mode 600) with fresh random tokens if it is missing or incomplete. */
export function ensureDevVars(path: string): DevSecrets {
  const existing = existsSync(path) ? parse(readFileSync(path, "utf8")) : {};
  if (existing.ADMIN_TOKEN && existing.WEBHOOK_SECRET) {
    return { ADMIN_TOKEN: existing.ADMIN_TOKEN, WEBHOOK_SECRET: existing.WEBHOOK_SECRET };
  }
  const secrets = {
    ADMIN_TOKEN: existing.ADMIN_TOKEN || randomBytes(24).toString("hex"),
    WEBHOOK_SECRET: existing.WEBHOOK_SECRET || randomBytes(24).toString("hex"),
  };
  const rest = Object.entries(existing).filter(
    ([k]) => k !== "ADMIN_TOKEN" && k !== "WEBHOOK_SECRET",
  );
  const lines = [
    "# Written by the local stack (npm start); git-ignored. Secrets for wrangler dev.",
    `ADMIN_TOKEN=${secrets.ADMIN_TOKEN}`,
    `WEBHOOK_SECRET=${secrets.WEBHOOK_SECRET}`,
    ...rest.map(([k, v]) => `${k}=${v}`),
  ];
  writeFileSync(path, `${lines.join("\n")}\n`, { mode: 0o600 });
  return secrets;
}
