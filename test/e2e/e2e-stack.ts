/**
 * What the end-to-end files start alike: the local stack (tools/local-stack) with its state in a
 * temporary directory of the file's own, on the 8B profile at 10x with engine reports every
 * 300 ms, and the official `openai` client pointed at it without retries.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import OpenAI from "openai";
import { profileNamed } from "../../sim/engine/profiles.ts";
import { type Stack, type StackOptions, startStack } from "../../tools/local-stack/stack.ts";

const root = resolve(import.meta.dirname, "../..");

/** A fresh temporary directory named after the test file (`prefix`); the file removes it. */
export function e2eDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** The stack with its KV, object storage and secrets under `dir`. */
export function startE2eStack(
  dir: string,
  engines: Pick<StackOptions, "origins" | "engines" | "external">,
): Promise<Stack> {
  return startStack({
    root,
    ...engines,
    profile: profileNamed("llama-3.1-8b-h100"),
    timeScale: 10,
    persistTo: join(dir, "state"),
    devVars: join(dir, "dev.vars"),
    reportIntervalMs: 300,
  });
}

/** The `openai` client for the router, without its retries (a test says when it wants them). */
export function routerClient(stack: Stack): OpenAI {
  return new OpenAI({
    baseURL: `${stack.routerUrl}/v1`,
    apiKey: "unused",
    maxRetries: 0,
    timeout: 30_000,
  });
}
