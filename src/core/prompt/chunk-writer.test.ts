import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chunkHashes } from "../chunk-hash.ts";
import { canonicalPrompt, writeCanonicalPrompt } from "./canonical-prompt.ts";
import { hashCanonical } from "./chunk-writer.ts";

/** The reference: each piece encoded by TextEncoder, then all the bytes hashed at once. */
function hashWhole(body: unknown, chunkBytes: number, seed: number) {
  const encoded: Uint8Array[] = [];
  const encoder = new TextEncoder();
  writeCanonicalPrompt(body, {
    text: (value) => encoded.push(encoder.encode(value)),
    tokenId: (id) => encoded.push(encoder.encode(`${id},`)),
  });
  const bytes = new Uint8Array(encoded.reduce((sum, piece) => sum + piece.length, 0));
  let at = 0;
  for (const piece of encoded) {
    bytes.set(piece, at);
    at += piece.length;
  }
  return { chunkHashes: chunkHashes(bytes, chunkBytes, seed), byteLength: bytes.length };
}

const hashStreamed = (body: unknown, chunkBytes: number, seed: number) =>
  hashCanonical((sink) => writeCanonicalPrompt(body, sink), chunkBytes, seed);

// Short strings are encoded by hand, long ones by TextEncoder in slices of the 64 KB buffer: both
// kinds, with every width of UTF-8, surrogate pairs and lone surrogates.
const unit = fc.constantFrom("a", "~", "é", "€", "😀", "\ud800", "\udc00", "\u0000");
const shortText = fc.array(unit, { maxLength: 300 }).map((units) => units.join(""));
const longText = fc
  .tuple(fc.array(unit, { minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 40_000 }))
  .map(([units, times]) => units.join("").repeat(times));
const text = fc.oneof(shortText, shortText, longText);
const tokenId = fc.oneof(
  fc.nat(200_000),
  fc.maxSafeNat(),
  fc.constantFrom(0, -0, 2 ** 31, 1.5, -3),
);
const part = fc.oneof(
  fc.record({ type: fc.constant("text"), text }),
  fc.record({ type: fc.constant("custom"), custom: fc.jsonValue({ maxDepth: 3 }) }),
);
const chat = fc.record({
  model: fc.constant("m"),
  tools: fc.array(fc.jsonValue({ maxDepth: 4 }), { maxLength: 2 }),
  messages: fc.array(
    fc.record({ role: fc.constant("user"), content: fc.oneof(text, fc.array(part)) }),
    { minLength: 1, maxLength: 4 },
  ),
});
const completion = fc.record({
  model: fc.constant("m"),
  prompt: fc.oneof(
    text,
    fc.array(text, { maxLength: 3 }),
    fc.array(tokenId, { maxLength: 30_000 }),
    fc.array(fc.array(tokenId, { maxLength: 5_000 }), { maxLength: 4 }),
  ),
});

describe("hashCanonical", () => {
  it("streaming through the buffer hashes exactly what encoding the whole text does", () => {
    fc.assert(
      fc.property(
        fc.oneof(chat, completion),
        fc.constantFrom(64, 256, 8192),
        fc.nat(),
        (body, chunkBytes, seed) => {
          expect(hashStreamed(body, chunkBytes, seed)).toEqual(hashWhole(body, chunkBytes, seed));
        },
      ),
      { numRuns: 200 },
    );
  });

  it("writes numbers that are not token ids as JavaScript prints them", () => {
    const body = { model: "m", prompt: [1e21, -1, 0.5, Number.MAX_SAFE_INTEGER + 2] };
    expect(hashStreamed(body, 64, 1)).toEqual(hashWhole(body, 64, 1));
    expect(canonicalPrompt(body)).toContain("1e+21,-1,0.5,9007199254740992,");
  });
});
