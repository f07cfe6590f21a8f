/**
 * The GGUF writer, read back by an independent parser of the format: header, every value type
 * it writes, tensor infos, the alignment of the data section and of each tensor, and the data.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { GGUF_TYPE, type GgufValue, writeGguf } from "./gguf-writer.ts";

interface Parsed {
  version: number;
  metadata: Map<string, unknown>;
  types: Map<string, number>;
  tensors: { name: string; dims: number[]; type: number; offset: number }[];
  dataStart: number;
  bytes: Buffer;
}

/** Reads a GGUF file per ggml's docs/gguf.md (the subset of types a file may hold is all). */
function parseGguf(bytes: Buffer): Parsed {
  let at = 0;
  /** The offset of the next `n` bytes, which it consumes. */
  const take = (n: number) => {
    at += n;
    return at - n;
  };
  const u32 = () => bytes.readUInt32LE(take(4));
  const u64 = () => Number(bytes.readBigUInt64LE(take(8)));
  const str = () => {
    const n = u64();
    return bytes.toString("utf8", take(n), at);
  };
  const value = (type: number): unknown => {
    switch (type) {
      case GGUF_TYPE.uint32:
        return u32();
      case GGUF_TYPE.int32:
        return bytes.readInt32LE(take(4));
      case GGUF_TYPE.float32:
        return bytes.readFloatLE(take(4));
      case GGUF_TYPE.bool:
        return bytes[take(1)] === 1;
      case GGUF_TYPE.string:
        return str();
      case GGUF_TYPE.uint64:
        return bytes.readBigUInt64LE(take(8));
      case GGUF_TYPE.array: {
        const itemType = u32();
        return Array.from({ length: u64() }, () => value(itemType));
      }
      default:
        throw new Error(`unexpected value type ${type}`);
    }
  };
  expect(bytes.toString("latin1", 0, 4)).toBe("GGUF");
  at = 4;
  const version = u32();
  const tensorCount = u64();
  const kvCount = u64();
  const metadata = new Map<string, unknown>();
  const types = new Map<string, number>();
  for (let i = 0; i < kvCount; i++) {
    const key = str();
    const type = u32();
    types.set(key, type);
    metadata.set(key, value(type));
  }
  const tensors = Array.from({ length: tensorCount }, () => {
    const name = str();
    const dims = Array.from({ length: u32() }, () => u64());
    return { name, dims, type: u32(), offset: u64() };
  });
  const alignment = (metadata.get("general.alignment") as number | undefined) ?? 32;
  const dataStart = Math.ceil(at / alignment) * alignment;
  return { version, metadata, types, tensors, dataStart, bytes };
}

/** `n` F32 values at `offset` in the data section. */
function floats(parsed: Parsed, offset: number, n: number): number[] {
  const start = parsed.dataStart + offset;
  return Array.from({ length: n }, (_, j) => parsed.bytes.readFloatLE(start + j * 4));
}

const dir = mkdtempSync(join(tmpdir(), "gguf-writer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function roundTrip(
  metadata: [string, GgufValue][],
  tensors: { name: string; dims: number[]; values: Float32Array }[],
  alignment?: number,
): Parsed {
  const path = join(dir, "t.gguf");
  writeGguf(path, {
    metadata,
    tensors: tensors.map((t) => ({ name: t.name, dims: t.dims, data: () => t.values })),
    alignment,
  });
  return parseGguf(readFileSync(path));
}

describe("writeGguf", () => {
  it("writes a v3 header, each value type, tensor infos and aligned data that read back", () => {
    const values = new Float32Array([1.5, -2, 3.25, 0, 7, 8]);
    const parsed = roundTrip(
      [
        ["a.u32", { type: "uint32", value: 4_000_000_000 }],
        ["a.i32", { type: "int32", value: -7 }],
        ["a.f32", { type: "float32", value: 0.5 }],
        ["a.u64", { type: "uint64", value: 2n ** 40n }],
        ["a.bool", { type: "bool", value: true }],
        ["a.str", { type: "string", value: "Ġhé <|im_start|>" }],
        ["a.strs", { type: "array", itemType: "string", value: ["x", "", "Ċ"] }],
        ["a.ints", { type: "array", itemType: "int32", value: [1, -3] }],
        ["a.none", { type: "array", itemType: "string", value: [] }],
      ],
      [
        { name: "w", dims: [3, 2], values },
        { name: "n", dims: [1], values: new Float32Array([9]) },
      ],
    );
    expect(parsed.version).toBe(3);
    expect([...parsed.metadata]).toEqual([
      ["a.u32", 4_000_000_000],
      ["a.i32", -7],
      ["a.f32", 0.5],
      ["a.u64", 2n ** 40n],
      ["a.bool", true],
      ["a.str", "Ġhé <|im_start|>"],
      ["a.strs", ["x", "", "Ċ"]],
      ["a.ints", [1, -3]],
      ["a.none", []],
      ["general.alignment", 32],
    ]);
    expect(parsed.types.get("a.ints")).toBe(GGUF_TYPE.array);
    expect(parsed.types.get("general.alignment")).toBe(GGUF_TYPE.uint32);
    expect(parsed.tensors).toEqual([
      { name: "w", dims: [3, 2], type: 0, offset: 0 },
      { name: "n", dims: [1], type: 0, offset: 32 }, // 24 bytes padded to 32
    ]);
    expect(floats(parsed, 0, 6)).toEqual([...values]);
    expect(floats(parsed, 32, 1)).toEqual([9]);
    expect(parsed.bytes.length).toBe(parsed.dataStart + 64);
  });

  it("aligns the data section and every tensor to any multiple of 8", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(8, 16, 32, 64),
        fc.string({ unit: "grapheme", maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 4 }),
        (alignment, text, sizes) => {
          const tensors = sizes.map((n, i) => ({
            name: `t${i}`,
            dims: [n],
            values: Float32Array.from({ length: n }, (_, j) => i * 10 + j),
          }));
          const parsed = roundTrip([["s", { type: "string", value: text }]], tensors, alignment);
          expect(parsed.metadata.get("s")).toBe(text);
          expect(parsed.metadata.get("general.alignment")).toBe(alignment);
          expect(parsed.dataStart % alignment).toBe(0);
          expect(parsed.tensors.map((t) => t.name)).toEqual(tensors.map((t) => t.name));
          for (const [i, { values }] of tensors.entries()) {
            const { offset } = parsed.tensors[i] ?? { offset: -1 };
            expect(offset % alignment).toBe(0);
            expect(floats(parsed, offset, values.length)).toEqual([...values]);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it("refuses an alignment that is not a positive multiple of 8, and a tensor of the wrong size", () => {
    expect(() => roundTrip([], [], 12)).toThrow(/multiple of 8/);
    expect(() =>
      roundTrip([], [{ name: "bad", dims: [2, 2], values: new Float32Array(3) }]),
    ).toThrow(/tensor bad: 3 values for dims 2x2/);
  });
});
