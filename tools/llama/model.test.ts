/**
 * The random model's vocabulary and its cache: GPT-2's byte symbols, and a model generated once
 * per size and seed, the same bytes for the same seed.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensureModel } from "./model.ts";
import { gpt2ByteSymbol, VOCAB_BYTES } from "./random-model.ts";

const dir = mkdtempSync(join(tmpdir(), "llama-model-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("gpt2ByteSymbol", () => {
  it("maps printable bytes to themselves and the rest above U+0100, one symbol per byte", () => {
    expect(gpt2ByteSymbol(0x41)).toBe("A");
    expect(gpt2ByteSymbol(0x20)).toBe("\u0120");
    expect(gpt2ByteSymbol(0x0a)).toBe("\u010a");
    expect(gpt2ByteSymbol(0xad)).toBe("\u0143");
    const all = Array.from({ length: 256 }, (_, b) => gpt2ByteSymbol(b));
    expect(new Set(all).size).toBe(256);
    expect(VOCAB_BYTES).toHaveLength(96);
  });
});

describe("ensureModel", () => {
  it("writes a model once per size and seed, the same bytes for the same seed", async () => {
    const a = await ensureModel({ size: "tiny", seed: 7, dir });
    expect(basename(a)).toMatch(/^llama-random-tiny-s7-v\d+\.gguf$/);
    const written = statSync(a).mtimeMs;
    expect(await ensureModel({ size: "tiny", seed: 7, dir })).toBe(a);
    expect(statSync(a).mtimeMs).toBe(written);

    const bytes = readFileSync(a);
    rmSync(a);
    expect(readFileSync(await ensureModel({ size: "tiny", seed: 7, dir }))).toEqual(bytes);
    const other = readFileSync(await ensureModel({ size: "tiny", seed: 8, dir }));
    expect(other.length).toBe(bytes.length);
    expect(other.equals(bytes)).toBe(false);
  });
});
