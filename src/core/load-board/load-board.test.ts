import { describe, expect, it } from "vitest";
import { asSlot } from "../origin-indexes.ts";
import { LoadBoard } from "./load-board.ts";

const [A, B] = [asSlot(0), asSlot(1)];

const options = {
  leaseMs: 10_000,
  failureThreshold: 2,
  cooldownMs: 1000,
  reportFreshMs: 1000,
  reportStaleMs: 3000,
};

function board(speed = 1000) {
  const b = new LoadBoard(options);
  b.ensure(A, speed);
  b.ensure(B, speed);
  return b;
}

describe("LoadBoard", () => {
  it("counts leases until released", () => {
    const b = board();
    b.lease("a", A, 500, 400, 0);
    b.lease("b", A, 300, 300, 0);
    expect(b.view(A, 0)).toMatchObject({
      outstanding: 2,
      activeTokens: 800,
      queuedPrefillTokens: 700,
    });
    b.release("a", true, 10);
    expect(b.view(A, 10).outstanding).toBe(1);
    expect(b.release("a", true, 10)).toBeUndefined();
  });

  it("queued prefill drains at the origin's speed and never goes negative", () => {
    const b = board(1000);
    b.lease("a", A, 2000, 2000, 0);
    expect(b.view(A, 500).queuedPrefillTokens).toBe(1500);
    expect(b.view(A, 5000).queuedPrefillTokens).toBe(0);
    // Idle time must not bank credit for later work.
    b.lease("b", A, 1000, 1000, 5000);
    expect(b.view(A, 5000).queuedPrefillTokens).toBe(1000);
  });

  it("a success proves the queue reached that request", () => {
    const b = board(10);
    b.lease("a", A, 1000, 1000, 0);
    b.lease("b", A, 1000, 1000, 0);
    b.release("b", true, 1);
    expect(b.view(A, 1).queuedPrefillTokens).toBe(0);
  });

  it("a failure removes the request's unserved tokens", () => {
    const b = board(1000);
    b.lease("a", A, 3000, 3000, 0);
    b.release("a", false, 1000);
    expect(b.view(A, 1000).queuedPrefillTokens).toBe(0);
  });

  it("an engine report of waiting requests raises the estimate to their tokens", () => {
    const b = board(1_000_000);
    b.lease("a", A, 100, 100, 0);
    b.lease("b", A, 700, 700, 0);
    b.lease("c", B, 900, 900, 0);
    expect(b.view(A, 100).queuedPrefillTokens).toBe(0);
    b.report(A, { running: 1, waiting: 1, kvUsage: 0.5 }, 100);
    expect(b.view(A, 100).queuedPrefillTokens).toBe(700);
  });

  it("leases expire so a lost completion cannot leak load", () => {
    const b = board();
    b.lease("a", A, 10, 10, 0);
    b.lease("b", B, 10, 10, 5000);
    expect(b.expire(9999)).toEqual([]);
    expect(b.expire(10_000).map((l) => l.ticket)).toEqual(["a"]);
    expect(b.view(A, 10_000).outstanding).toBe(0);
    expect(b.view(B, 10_000).outstanding).toBe(1);
    expect(b.expire(15_000).map((l) => l.ticket)).toEqual(["b"]);
    expect(b.outstanding).toBe(0);
  });

  it("engine reports fade from fresh to stale", () => {
    const b = board();
    b.report(A, { running: 3, waiting: 2, kvUsage: 0.4 }, 0);
    expect(b.view(A, 1000).engine?.freshness).toBe(1);
    expect(b.view(A, 2000).engine?.freshness).toBeCloseTo(0.5);
    expect(b.view(A, 3000).engine).toBeNull();
    expect(b.view(A, 3000).reportAgeMs).toBe(3000);
  });

  it("health and the circuit decide eligibility", () => {
    const b = board();
    expect(b.eligible(A, 0)).toBe(true);
    b.setHealth(A, "draining");
    expect(b.eligible(A, 0)).toBe(false);
    b.setHealth(A, "up");
    b.onFailure(A, 0);
    b.onFailure(A, 0);
    expect(b.view(A, 1).circuit).toBe("open");
    expect(b.eligible(A, 1)).toBe(false);
    expect(b.eligible(A, 1000)).toBe(true);
    b.lease("probe", A, 1, 1, 1000);
    expect(b.eligible(A, 1001)).toBe(false);
    b.onSuccess(A);
    expect(b.eligible(A, 1001)).toBe(true);
  });

  it("removing an origin drops its leases", () => {
    const b = board();
    b.lease("a", A, 10, 10, 0);
    b.remove(A);
    expect(b.outstanding).toBe(0);
    expect(() => b.view(A, 0)).toThrow(RangeError);
  });

  it("counts uncached tokens as prefilling until the first token, or until the end", () => {
    const b = board(1000);
    b.lease("a", A, 3000, 3000, 0, { uncachedTokens: 2000 });
    b.lease("b", A, 1000, 1000, 0, { uncachedTokens: 500 });
    expect(b.view(A, 0).prefillingTokens).toBe(2500);
    expect(b.firstToken("a", 100)).toBe(true);
    // The first token proves a's prefill done: the fluid queue served up to it.
    expect(b.view(A, 100)).toMatchObject({ prefillingTokens: 500, queuedPrefillTokens: 1000 });
    b.firstToken("a", 200);
    b.release("a", true, 300);
    expect(b.view(A, 300).prefillingTokens).toBe(500);
    b.release("b", true, 400);
    expect(b.view(A, 400).prefillingTokens).toBe(0);
    expect(b.firstToken("b", 500)).toBe(false);
  });

  it("tracks distinct in-flight chunks only when asked, a shared chunk once", () => {
    const untracked = board();
    untracked.lease("a", A, 256, 256, 0, { hashes: [1, 2, 3, 4] });
    expect(untracked.view(A, 0).activeChunks).toBeNull();
    expect(untracked.addedChunks(A, [1, 2, 9], true)).toBe(4);

    const b = new LoadBoard({ ...options, trackActiveChunks: true });
    b.ensure(A, 1000);
    b.lease("a", A, 300, 300, 0, { hashes: [1, 2, 3, 4], partial: true });
    b.lease("b", A, 256, 256, 0, { hashes: [1, 2, 7, 8] });
    expect(b.view(A, 0).activeChunks).toBe(7);
    expect(b.addedChunks(A, [1, 2, 3, 9], true)).toBe(2);
    b.release("a", true, 1);
    expect(b.view(A, 1).activeChunks).toBe(4);
    b.release("b", true, 2);
    expect(b.view(A, 2).activeChunks).toBe(0);
  });

  it("turning chunk tracking on counts the leases already held", () => {
    const b = board();
    b.lease("a", A, 256, 256, 0, { hashes: [1, 2, 3, 4] });
    b.options = { ...options, trackActiveChunks: true };
    expect(b.view(A, 0).activeChunks).toBe(4);
    b.release("a", true, 1);
    expect(b.view(A, 1).activeChunks).toBe(0);
  });
});
