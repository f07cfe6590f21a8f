import { describe, expect, it } from "vitest";
import { RadixIndex } from "./radix-index.ts";

/** A chained path: `shared` chunks common to every family member, then a private tail. */
const path = (shared: number, member: number, length: number) =>
  Array.from({ length }, (_, i) => (i < shared ? 1000 + i : 100_000 * (member + 1) + i));

describe("RadixIndex heat", () => {
  const index = () => new RadixIndex({ maxOrigins: 4, maxChunks: 100_000, heatHalfLifeMs: 1000 });

  it("a prefix many requests share runs hot; each private tail stays cool", () => {
    const x = index();
    for (let m = 0; m < 10; m++) x.insert(path(8, m, 20), m % 4, 0);
    expect(x.hotDepth(path(8, 3, 20), 0, 5)).toBe(8);
    expect(x.hotDepth(path(8, 3, 20), 0, 1)).toBe(20);
    expect(x.hotDepth(path(8, 3, 20), 0, 11)).toBe(0);
    // A request the index has never seen: only its held (shared) part can be hot.
    expect(x.hotDepth(path(8, 99, 20), 0, 5)).toBe(8);
  });

  it("heat halves every half-life", () => {
    const x = index();
    for (let k = 0; k < 8; k++) x.insert(path(4, 0, 4), 0, 0);
    expect(x.hotDepth(path(4, 0, 4), 0, 8)).toBe(4);
    expect(x.hotDepth(path(4, 0, 4), 1000, 4)).toBe(4);
    expect(x.hotDepth(path(4, 0, 4), 1001, 4)).toBe(0);
    expect(x.hotDepth(path(4, 0, 4), 2000, 2)).toBe(4);
  });

  it("a split keeps the heat of both parts", () => {
    const x = index();
    for (let k = 0; k < 6; k++) x.insert(path(10, 0, 10), 0, 0);
    x.insert(path(5, 1, 10), 1, 0); // diverges at depth 5: splits the 10-chunk node
    expect(x.hotDepth(path(10, 0, 10), 0, 6)).toBe(10);
    expect(x.hotDepth(path(5, 1, 10), 0, 7)).toBe(5);
  });

  it("shared depth: a hot prefix where prompts branch, never one conversation's own turns", () => {
    const x = index();
    for (let m = 0; m < 10; m++) x.insert(path(8, m, 20), m % 4, 0);
    // Ten prompts branch after the 8 shared chunks, which ten requests warmed.
    expect(x.sharedDepth(path(8, 3, 20), 0, 5)).toBe(8);
    expect(x.sharedDepth(path(8, 3, 20), 0, 11)).toBe(0);
    // One conversation: each turn extends the last, so nothing branches however hot it runs.
    const y = index();
    for (let turn = 1; turn <= 12; turn++) y.insert(path(0, 7, 4 * turn), 0, 0);
    expect(y.hotDepth(path(0, 7, 48), 0, 5)).toBeGreaterThan(0);
    expect(y.sharedDepth(path(0, 7, 48), 0, 1)).toBe(0);
  });

  it("shared depth stops at what the request holds", () => {
    const x = index();
    for (let m = 0; m < 6; m++) x.insert(path(8, m, 20), 0, 0);
    expect(x.sharedDepth(path(8, 0, 5), 0, 1)).toBe(5);
    expect(x.sharedDepth([], 0, 1)).toBe(0);
  });

  it("rejects a half-life that is not a positive number", () => {
    expect(() => new RadixIndex({ maxOrigins: 1, maxChunks: 10, heatHalfLifeMs: 0 })).toThrow(
      /heatHalfLifeMs/,
    );
  });
});
