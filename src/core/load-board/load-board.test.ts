import { describe, expect, it } from "vitest";
import { LoadBoard } from "./load-board.ts";

const options = {
  leaseMs: 10_000,
  failureThreshold: 2,
  cooldownMs: 1000,
  reportFreshMs: 1000,
  reportStaleMs: 3000,
};

function board(speed = 1000) {
  const b = new LoadBoard(options);
  b.ensure(0, speed);
  b.ensure(1, speed);
  return b;
}

describe("LoadBoard", () => {
  it("counts leases until released", () => {
    const b = board();
    b.lease("a", 0, 500, 400, 0);
    b.lease("b", 0, 300, 300, 0);
    expect(b.view(0, 0)).toMatchObject({
      outstanding: 2,
      activeTokens: 800,
      queuedPrefillTokens: 700,
    });
    b.release("a", true, 10);
    expect(b.view(0, 10).outstanding).toBe(1);
    expect(b.release("a", true, 10)).toBeUndefined();
  });

  it("queued prefill drains at the origin's speed and never goes negative", () => {
    const b = board(1000);
    b.lease("a", 0, 2000, 2000, 0);
    expect(b.view(0, 500).queuedPrefillTokens).toBe(1500);
    expect(b.view(0, 5000).queuedPrefillTokens).toBe(0);
    // Idle time must not bank credit for later work.
    b.lease("b", 0, 1000, 1000, 5000);
    expect(b.view(0, 5000).queuedPrefillTokens).toBe(1000);
  });

  it("a success proves the queue reached that request", () => {
    const b = board(10);
    b.lease("a", 0, 1000, 1000, 0);
    b.lease("b", 0, 1000, 1000, 0);
    b.release("b", true, 1);
    expect(b.view(0, 1).queuedPrefillTokens).toBe(0);
  });

  it("a failure removes the request's unserved tokens", () => {
    const b = board(1000);
    b.lease("a", 0, 3000, 3000, 0);
    b.release("a", false, 1000);
    expect(b.view(0, 1000).queuedPrefillTokens).toBe(0);
  });

  it("an engine report of waiting requests raises the estimate to their tokens", () => {
    const b = board(1_000_000);
    b.lease("a", 0, 100, 100, 0);
    b.lease("b", 0, 700, 700, 0);
    b.lease("c", 1, 900, 900, 0);
    expect(b.view(0, 100).queuedPrefillTokens).toBe(0);
    b.report(0, { running: 1, waiting: 1, kvUsage: 0.5 }, 100);
    expect(b.view(0, 100).queuedPrefillTokens).toBe(700);
  });

  it("leases expire so a lost completion cannot leak load", () => {
    const b = board();
    b.lease("a", 0, 10, 10, 0);
    b.lease("b", 1, 10, 10, 5000);
    expect(b.expire(9999)).toEqual([]);
    expect(b.expire(10_000).map((l) => l.ticket)).toEqual(["a"]);
    expect(b.view(0, 10_000).outstanding).toBe(0);
    expect(b.view(1, 10_000).outstanding).toBe(1);
    expect(b.expire(15_000).map((l) => l.ticket)).toEqual(["b"]);
    expect(b.outstanding).toBe(0);
  });

  it("engine reports fade from fresh to stale", () => {
    const b = board();
    b.report(0, { running: 3, waiting: 2, kvUsage: 0.4 }, 0);
    expect(b.view(0, 1000).engine?.freshness).toBe(1);
    expect(b.view(0, 2000).engine?.freshness).toBeCloseTo(0.5);
    expect(b.view(0, 3000).engine).toBeNull();
    expect(b.view(0, 3000).reportAgeMs).toBe(3000);
  });

  it("health and the circuit decide eligibility", () => {
    const b = board();
    expect(b.eligible(0, 0)).toBe(true);
    b.setHealth(0, "draining");
    expect(b.eligible(0, 0)).toBe(false);
    b.setHealth(0, "up");
    b.onFailure(0, 0);
    b.onFailure(0, 0);
    expect(b.view(0, 1).circuit).toBe("open");
    expect(b.eligible(0, 1)).toBe(false);
    expect(b.eligible(0, 1000)).toBe(true);
    b.lease("probe", 0, 1, 1, 1000);
    expect(b.eligible(0, 1001)).toBe(false);
    b.onSuccess(0);
    expect(b.eligible(0, 1001)).toBe(true);
  });

  it("removing an origin drops its leases", () => {
    const b = board();
    b.lease("a", 0, 10, 10, 0);
    b.remove(0);
    expect(b.outstanding).toBe(0);
    expect(() => b.view(0, 0)).toThrow(RangeError);
  });

  it("counts uncached tokens as prefilling until the first token, or until the end", () => {
    const b = board(1000);
    b.lease("a", 0, 3000, 3000, 0, { uncachedTokens: 2000 });
    b.lease("b", 0, 1000, 1000, 0, { uncachedTokens: 500 });
    expect(b.view(0, 0).prefillingTokens).toBe(2500);
    expect(b.firstToken("a", 100)).toBe(true);
    // The first token proves a's prefill done: the fluid queue served up to it.
    expect(b.view(0, 100)).toMatchObject({ prefillingTokens: 500, queuedPrefillTokens: 1000 });
    b.firstToken("a", 200);
    b.release("a", true, 300);
    expect(b.view(0, 300).prefillingTokens).toBe(500);
    b.release("b", true, 400);
    expect(b.view(0, 400).prefillingTokens).toBe(0);
    expect(b.firstToken("b", 500)).toBe(false);
  });

  it("tracks distinct in-flight chunks only when asked, a shared chunk once", () => {
    const untracked = board();
    untracked.lease("a", 0, 256, 256, 0, { hashes: [1, 2, 3, 4] });
    expect(untracked.view(0, 0).activeChunks).toBeNull();
    expect(untracked.addedChunks(0, [1, 2, 9], true)).toBe(4);

    const b = new LoadBoard({ ...options, trackActiveChunks: true });
    b.ensure(0, 1000);
    b.lease("a", 0, 300, 300, 0, { hashes: [1, 2, 3, 4], partial: true });
    b.lease("b", 0, 256, 256, 0, { hashes: [1, 2, 7, 8] });
    expect(b.view(0, 0).activeChunks).toBe(7);
    expect(b.addedChunks(0, [1, 2, 3, 9], true)).toBe(2);
    b.release("a", true, 1);
    expect(b.view(0, 1).activeChunks).toBe(4);
    b.release("b", true, 2);
    expect(b.view(0, 2).activeChunks).toBe(0);
  });

  it("turning chunk tracking on counts the leases already held", () => {
    const b = board();
    b.lease("a", 0, 256, 256, 0, { hashes: [1, 2, 3, 4] });
    b.options = { ...options, trackActiveChunks: true };
    expect(b.view(0, 0).activeChunks).toBe(4);
    b.release("a", true, 1);
    expect(b.view(0, 1).activeChunks).toBe(0);
  });
});
