/**
 * Engine webhook signatures, in the Stripe style, written once for the three parties that use
 * them: the reporter signs (tools/reporter), the Worker verifies (POST /v1/engine/events), and
 * the Worker's tests sign what they send. The header
 *   x-router-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 * binds the body to its timestamp, so a captured body cannot be replayed under a fresh
 * timestamp, and a timestamp more than MAX_SKEW_SECONDS away from now is refused. A replay of
 * the same signed request inside that window passes here; the pool refuses it by the batch's
 * id and time (`BatchLedger`), which is why both share the window (`BATCH_WINDOW_MS`).
 * Several `v1=` entries are allowed so a secret can be rotated.
 *
 * WebCrypto (`crypto.subtle`) is the one API used beyond the language, and the same global in
 * workerd and Node: HMAC is computation, not I/O or randomness (web-crypto.d.ts declares just
 * these calls; the purity test allows no other). The comparison is `crypto.subtle.verify`,
 * which is constant-time.
 */
import { BATCH_WINDOW_MS } from "./engine-events.ts";

export const SIGNATURE_HEADER = "x-router-signature";
const MAX_SKEW_SECONDS = BATCH_WINDOW_MS / 1000;

export type SignatureCheck =
  | { ok: true }
  | { ok: false; reason: "missing" | "malformed" | "stale" | "mismatch" };

/** Imported keys by secret; the key, not the promise, is kept (a promise is per request). */
const keys = new Map<string, CryptoKey>();

async function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = await crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
    keys.set(secret, key);
  }
  return key;
}

/** The signed bytes: `<t>.` then the raw body. */
function signedBytes(timestamp: string, body: string | ArrayBuffer): Uint8Array<ArrayBuffer> {
  const prefix = new TextEncoder().encode(`${timestamp}.`);
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : new Uint8Array(body);
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix);
  signed.set(bytes, prefix.length);
  return signed;
}

function hexBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return null;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** The header value signing `body` at `unixSeconds`. */
export async function signatureHeader(
  secret: string,
  body: string | ArrayBuffer,
  unixSeconds: number,
): Promise<string> {
  const t = String(Math.floor(unixSeconds));
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), signedBytes(t, body));
  const hex = Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, "0")).join("");
  return `t=${t},v1=${hex}`;
}

/** Whether `header` signs `body` with `secret` within the window around `nowSeconds`. */
export async function verifySignature(
  secret: string,
  header: string | undefined,
  body: string | ArrayBuffer,
  nowSeconds: number,
): Promise<SignatureCheck> {
  if (!header) return { ok: false, reason: "missing" };
  let timestamp: string | null = null;
  const signatures: Uint8Array<ArrayBuffer>[] = [];
  for (const part of header.split(",")) {
    const [name, value = ""] = part.trim().split("=", 2);
    if (name === "t" && /^\d{1,12}$/.test(value)) timestamp = value;
    else if (name === "v1") {
      const bytes = hexBytes(value);
      if (bytes) signatures.push(bytes);
    }
  }
  if (timestamp === null || signatures.length === 0) return { ok: false, reason: "malformed" };
  if (Math.abs(nowSeconds - Number(timestamp)) > MAX_SKEW_SECONDS) {
    return { ok: false, reason: "stale" };
  }
  const signed = signedBytes(timestamp, body);
  const key = await hmacKey(secret);
  for (const signature of signatures) {
    if (await crypto.subtle.verify("HMAC", key, signature, signed)) return { ok: true };
  }
  return { ok: false, reason: "mismatch" };
}
