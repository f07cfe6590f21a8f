import { describe, expect, it } from "vitest";
import { ISOLATE_ID_BYTES, ISOLATE_ID_CHARS, isolateId } from "./isolate-id.ts";

describe("isolateId", () => {
  it("writes 16 bytes as 22 base64url characters, every bit kept", () => {
    expect(isolateId(new Uint8Array(ISOLATE_ID_BYTES))).toBe("A".repeat(ISOLATE_ID_CHARS));
    expect(isolateId(new Uint8Array(ISOLATE_ID_BYTES).fill(255))).toBe(`${"_".repeat(21)}w`);
    const bytes = Uint8Array.from({ length: 16 }, (_, i) => i * 17);
    const base64 = btoa(String.fromCharCode(...bytes));
    expect(isolateId(bytes)).toBe(
      base64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""),
    );
    const flipped = bytes.slice();
    flipped[15] = (flipped[15] as number) ^ 1;
    expect(isolateId(flipped)).not.toBe(isolateId(bytes));
  });

  it("refuses any other number of bytes", () => {
    expect(() => isolateId(new Uint8Array(4))).toThrow(RangeError);
  });
});
