import { describe, expect, it } from "vitest";
import {
  type FailedAttempt,
  failovers,
  type RequestOutcome,
  type RequestReport,
  routerOutcome,
} from "./request-report.ts";

const timeout: FailedAttempt = { origin: "a", kind: "timeout" };
const busy: FailedAttempt = { origin: "b", kind: "status-429" };

function report(outcome: RequestOutcome, failures: FailedAttempt[] = []): RequestReport {
  return {
    origin: "c",
    outcome,
    failures,
    matchedTokens: 64,
    promptTokens: 100,
    cachedTokens: 60,
    objectMs: 2,
    fallback: null,
  };
}

describe("RequestReport", () => {
  it.each<[RequestOutcome, FailedAttempt[], ReturnType<typeof routerOutcome>]>([
    ["ok", [timeout], { ok: true, promptTokens: 100, cachedTokens: 60 }],
    ["stream_error", [], { ok: false, failure: "stream" }],
    ["failed", [timeout, busy], { ok: false, failure: "status-429" }],
    ["origin_status", [], { ok: false }],
    ["client_abort", [timeout], { ok: false }],
  ])("tells the router what a %s request teaches it", (outcome, failures, expected) => {
    expect(routerOutcome(report(outcome, failures))).toEqual(expected);
  });

  it("passes a prefill leg's usage whatever became of the decode, so the core learns from it", () => {
    const usage = { promptTokens: 100, cachedTokens: 40 };
    const prefill = { origin: "p", matchedTokens: 32, usage };
    for (const outcome of ["ok", "stream_error", "client_abort"] as const) {
      expect(routerOutcome({ ...report(outcome), prefill }).prefill).toEqual(usage);
    }
    // llm-d's sidecar answers no prefill usage: nothing to learn.
    expect(routerOutcome({ ...report("ok"), prefill: { origin: "p", matchedTokens: 0 } })).toEqual({
      ok: true,
      promptTokens: 100,
      cachedTokens: 60,
    });
  });

  it("tells the router a streamed answer's first byte as its time to first token, never a whole JSON answer's", () => {
    const ok = { ...report("ok"), ttfbMs: 180 };
    expect(routerOutcome({ ...ok, streamed: true }).ttftMs).toBe(180);
    expect(routerOutcome(ok).ttftMs).toBeUndefined();
    expect(
      routerOutcome({ ...report("stream_error"), ttfbMs: 180, streamed: true }).ttftMs,
    ).toBeUndefined();
  });

  it("counts a failover for each failed attempt another origin followed", () => {
    expect(failovers(report("ok", [timeout, busy]))).toEqual([timeout, busy]);
    // No origin answered: the last failure ended the request, nothing followed it.
    expect(failovers(report("failed", [timeout, busy]))).toEqual([timeout]);
    expect(failovers(report("failed", [timeout]))).toEqual([]);
  });
});
