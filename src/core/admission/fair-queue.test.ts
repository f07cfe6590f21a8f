import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FairQueue, type Waiting } from "./fair-queue.ts";

let next = 0;
function entry(key: string, band = 0, since = 0): Waiting {
  return { id: `r${next++}`, key, band, since };
}

function drain(q: FairQueue<Waiting>): string[] {
  const out: string[] = [];
  for (let e = q.shift(); e; e = q.shift()) out.push(`${e.key}${e.band}`);
  return out;
}

describe("FairQueue", () => {
  it("serves interactive before batch whatever arrived first", () => {
    const q = new FairQueue<Waiting>();
    q.push(entry("a", 1));
    q.push(entry("b", 0));
    q.push(entry("a", 1));
    q.push(entry("c", 0));
    expect(drain(q)).toEqual(["b0", "c0", "a1", "a1"]);
  });

  it("serves keys in turn: a key that floods the room waits behind its own requests", () => {
    const q = new FairQueue<Waiting>();
    for (let i = 0; i < 5; i++) q.push(entry("flood"));
    q.push(entry("light"));
    q.push(entry("other"));
    expect(drain(q)).toEqual([
      "flood0",
      "light0",
      "other0",
      "flood0",
      "flood0",
      "flood0",
      "flood0",
    ]);
  });

  it("names the longest key, none on a tie when strict, and its newest request", () => {
    const q = new FairQueue<Waiting>();
    q.push(entry("a"));
    q.push(entry("b"));
    const newest = entry("b");
    q.push(newest);
    expect(q.longestKey(0)).toBe("b");
    expect(q.newest(0, "b")).toBe(newest);
    q.push(entry("a"));
    expect(q.longestKey(0, true)).toBeUndefined();
    expect(q.longestKey(0)).toBe("a");
  });

  it("a removed request frees its key's turn", () => {
    const q = new FairQueue<Waiting>();
    const gone = entry("a");
    q.push(gone);
    q.push(entry("b"));
    expect(q.remove(gone.id)).toBe(gone);
    expect(q.keys(0)).toBe(1);
    q.checkInvariants();
    expect(drain(q)).toEqual(["b0"]);
  });

  it("property: `ahead` bounds how many are served before a new request, and the books hold", () => {
    const op = fc.oneof(
      fc.record({
        push: fc.constantFrom("a", "b", "c", "d"),
        band: fc.integer({ min: 0, max: 1 }),
      }),
      fc.record({ shift: fc.constant(true) }),
      fc.record({ remove: fc.nat(20) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.constantFrom("a", "b", "e"), (ops, key) => {
        const q = new FairQueue<Waiting>();
        const ids: string[] = [];
        for (const o of ops) {
          if ("push" in o) {
            const e = entry(o.push, o.band);
            ids.push(e.id);
            q.push(e);
          } else if ("shift" in o) {
            q.shift();
          } else {
            q.remove(ids[o.remove % Math.max(1, ids.length)] ?? "");
          }
          q.checkInvariants();
        }
        for (const band of [0, 1]) {
          const probe = entry(key, band);
          const bound = q.ahead(band, key);
          const copy = new FairQueue<Waiting>();
          for (const e of [...q.all()].sort(
            (x, y) => Number(x.id.slice(1)) - Number(y.id.slice(1)),
          ))
            copy.push(e);
          copy.push(probe);
          let before = 0;
          while (copy.shift() !== probe) before++;
          expect(before).toBeLessThanOrEqual(bound);
        }
      }),
    );
  });
});
