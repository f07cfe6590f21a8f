/**
 * Test-only: the workload the bench tests replay, the bundled conversation trace on the 8B H100
 * profile with the CLI's reporting defaults. Each test names only what it changes (origins,
 * limit, arrivals, load), so one spec is written once rather than per test file.
 */
import { fileURLToPath } from "node:url";
import type { BenchSpec } from "./runner.ts";

/** The benchmark CLI's default trace (bench/sim/args.ts `DEFAULT_TRACE`). */
const CONVERSATION_TRACE = fileURLToPath(
  new URL("../../bench/traces/conversation_trace.jsonl", import.meta.url),
);

export function conversationSpec(overrides: Partial<BenchSpec> = {}): BenchSpec {
  return {
    source: { kind: "mooncake", path: CONVERSATION_TRACE },
    trace: "conversation_trace.jsonl",
    arrivals: "jitter",
    load: 1,
    origins: 8,
    profile: "llama-3.1-8b-h100",
    chunkTokens: 64,
    seed: 1,
    reportIntervalMs: 1000,
    reportDelayMs: 100,
    engineDelayMs: 10,
    prefillCalibration: [1],
    ...overrides,
  };
}
