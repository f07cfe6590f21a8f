import { createHmac } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { signatureHeader, verifySignature } from "./webhook-signature.ts";

const SECRET = "s3cret";
const T = 1_700_000_000;
/** The format written out by hand with Node's own HMAC, independent of the module. */
const nodeMac = (secret: string, t: number, body: string) =>
  createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");

describe("webhook signatures", () => {
  it("signs t.body with HMAC-SHA256 in hex, as Node's own HMAC computes it", async () => {
    // WebCrypto refuses an empty key; the reporter and the Worker both refuse an empty secret.
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "grapheme" }),
        fc.string({ minLength: 1 }),
        async (body, secret) => {
          expect(await signatureHeader(secret, body, T)).toBe(
            `t=${T},v1=${nodeMac(secret, T, body)}`,
          );
        },
      ),
      { numRuns: 50 },
    );
  });

  it("verifies what it signed, as text or as the raw bytes the Worker reads", async () => {
    const body = '{"origin":"gpu-a","events":[{"type":"cache-reset"}]} é';
    const header = await signatureHeader(SECRET, body, T);
    const bytes = new TextEncoder().encode(body).buffer as ArrayBuffer;
    expect(await verifySignature(SECRET, header, body, T)).toEqual({ ok: true });
    expect(await verifySignature(SECRET, header, bytes, T + 300)).toEqual({ ok: true });
  });

  it("accepts any of several v1 entries, so a secret can be rotated", async () => {
    const header = `t=${T},v1=${nodeMac("old", T, "{}")},v1=${nodeMac(SECRET, T, "{}")}`;
    expect(await verifySignature(SECRET, header, "{}", T)).toEqual({ ok: true });
  });

  it.each([
    ["missing", undefined, T],
    ["malformed", `v1=${nodeMac(SECRET, T, "{}")}`, T],
    ["malformed", `t=${T},v1=zz`, T],
    ["stale", `t=${T},v1=${nodeMac(SECRET, T, "{}")}`, T + 301],
    ["stale", `t=${T},v1=${nodeMac(SECRET, T, "{}")}`, T - 301],
    ["mismatch", `t=${T},v1=${nodeMac("other", T, "{}")}`, T],
    ["mismatch", `t=${T + 1},v1=${nodeMac(SECRET, T, "{}")}`, T],
  ])("refuses a %s signature (%s)", async (reason, header, now) => {
    expect(await verifySignature(SECRET, header, "{}", now)).toEqual({ ok: false, reason });
  });

  it("refuses the signature of one body on another", async () => {
    const header = await signatureHeader(SECRET, '{"a":1}', T);
    expect(await verifySignature(SECRET, header, '{"a":2}', T)).toEqual({
      ok: false,
      reason: "mismatch",
    });
  });
});
