import { describe, expect, it } from "vitest";
import { ResponseStore } from "./response-store.ts";

const stored = (n: number) => ({ response: { id: `resp_${n}` }, conversation: [n] });

describe("ResponseStore", () => {
  it("forgets the least recently used past its capacity; a read counts as a use", () => {
    const store = new ResponseStore(2);
    store.set("a", stored(1));
    store.set("b", stored(2));
    expect(store.get("a")).toEqual(stored(1));
    store.set("c", stored(3));
    expect(store.get("b")).toBeUndefined();
    expect(store.get("a")).toEqual(stored(1));
    expect(store.get("c")).toEqual(stored(3));
    expect(store.size).toBe(2);
  });

  it("deletes, and rejects a capacity that is not a positive integer", () => {
    const store = new ResponseStore(1);
    store.set("a", stored(1));
    expect(store.delete("a")).toBe(true);
    expect(store.delete("a")).toBe(false);
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new ResponseStore(bad)).toThrow();
  });
});
