/**
 * The core must run unchanged in workerd (Durable Object, Worker fallback) and in Node (the
 * simulator): no runtime imports, no clock, no global randomness, no I/O (WebCrypto's HMAC
 * calls are allowed: they compute, the same in both runtimes). The type-check already
 * gives src/core no runtime typings; this test also catches what types cannot (e.g. `Date.now()`).
 * Tests and their support (`test-support/`, reference models, fixtures) are not shipped, so they
 * are not checked; production code must not import them.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL(".", import.meta.url).pathname;
const TEST_SUPPORT = "test-support";

/** Production sources: every `.ts` file but tests and the test-support folder. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === TEST_SUPPORT ? [] : sources(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

const forbidden: [string, RegExp][] = [
  ["runtime import", /from\s+["'](cloudflare:|hono|node:|@cloudflare\/)/],
  ["wall clock", /Date\.now\(|new Date\(|performance\.now\(/],
  // WebCrypto's HMAC calls are computation (webhook-signature.ts); any other crypto is not.
  ["global randomness", /Math\.random\(|crypto\.(?!subtle\.(?:importKey|sign|verify)\()/],
  ["I/O or timers", /\bfetch\(|setTimeout\(|setInterval\(|console\./],
  ["test support imported", new RegExp(`from\\s+["'][^"']*/${TEST_SUPPORT}/`)],
];

describe("src/core purity", () => {
  const files = sources(root);
  it("has sources to check, and none from test support", () => {
    expect(files.length).toBeGreaterThan(10);
    expect(files.filter((f) => f.includes(`/${TEST_SUPPORT}/`))).toEqual([]);
  });
  it.each(forbidden)("no %s", (_name, pattern) => {
    const offenders = files.filter((f) => {
      const code = readFileSync(f, "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/^\s*\/\/.*$/gm, "");
      return pattern.test(code);
    });
    expect(offenders.map((f) => relative(root, f))).toEqual([]);
  });
});
