/**
 * Signs a webhook body the way the router verifies it:
 *   x-router-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 * The timestamp is inside the MAC, so a captured body cannot be replayed with a fresh time, and
 * the router rejects signatures older than five minutes.
 */
import { createHmac } from "node:crypto";

export const SIGNATURE_HEADER = "x-router-signature";

export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}
