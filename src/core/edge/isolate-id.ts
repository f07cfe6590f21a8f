/**
 * An isolate's id in the edge protocol: 128 random bits as 22 base64url characters. It names
 * the isolate in its coordinator's ledger of applied batches and prefixes its replica's tickets,
 * so two live isolates must never share one: with 32 bits (8 hex characters, as before issue 23)
 * a new isolate that drew an id still in the ledger had every batch answered `duplicate`, its
 * load and claims never seen. The caller draws the bytes (the core draws no randomness).
 */

/** Random bytes an id holds (128 bits). */
export const ISOLATE_ID_BYTES = 16;
/** Characters of an id: ceil(128 / 6). */
export const ISOLATE_ID_CHARS = 22;

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** The id of `random` (ISOLATE_ID_BYTES random bytes), base64url without padding. */
export function isolateId(random: Uint8Array): string {
  if (random.length !== ISOLATE_ID_BYTES) {
    throw new RangeError(`an isolate id needs ${ISOLATE_ID_BYTES} random bytes`);
  }
  let out = "";
  let bits = 0;
  let held = 0;
  for (const byte of random) {
    held = (held << 8) | byte;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += ALPHABET[(held >> bits) & 63];
    }
    held &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(held << (6 - bits)) & 63];
  return out;
}
