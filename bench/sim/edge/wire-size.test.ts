import { serialize } from "node:v8";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { wireSize } from "./wire-size.ts";

describe("wireSize", () => {
  it("counts what v8.serialize writes for plain data built afresh", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (generated) => {
        // fast-check's arrays may be holey (V8 writes those sparsely); JSON.parse builds the
        // packed arrays a freshly built value has.
        const value = JSON.parse(JSON.stringify(generated)) as unknown;
        expect(wireSize(value)).toBe(serialize(value).length);
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ["int32 bounds", [2 ** 31 - 1, -(2 ** 31)]],
    ["past int32, and -0", [2 ** 31, -0, 1.5]],
    ["hashes", [5104359519009379, 1222782008204148]],
    ["numbers with a double", [1, 2.5]],
    ["a two-byte string after one-byte ones", ["a", "é", "€"]],
    ["index keys and undefined", { 3: 1, a: undefined, b: null, c: true }],
    ["bytes", { bootstrap: new Uint8Array([1, 2, 3]) }],
  ])("agrees with v8.serialize on %s", (_, value) => {
    expect(wireSize(value)).toBe(serialize(value).length);
  });

  it("counts one object reached twice as a reference, as V8 does", () => {
    const shared = { x: 1 };
    expect(wireSize([shared, shared])).toBe(serialize([shared, shared]).length);
  });

  it("gives a holey array the size of its packed copy: replays of one seed agree on bytes", () => {
    const holey = new Array<number>(3);
    for (let i = 0; i < 3; i++) holey[i] = 4e15 + i;
    const packed = [4e15, 4e15 + 1, 4e15 + 2];
    // V8 writes the holey one sparsely (a key per element) ...
    expect(serialize(holey).length).toBeGreaterThan(serialize(packed).length);
    // ... the size here is the value's, however V8 holds it.
    expect(wireSize(holey)).toBe(serialize(packed).length);
  });
});
