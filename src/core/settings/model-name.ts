/**
 * @module
 * What a model name (a pool's name, or a model a client key lists) must be so that every store
 * that holds it can: the settings document accepts it, and so does Workers KV, where a key that
 * names the pool leaves the marker `client-keys:enforced:<model>` (worker/access/key-store.ts).
 * KV refuses a key name over 512 bytes of UTF-8, and a name that is not well-formed UTF-16 (a
 * lone surrogate) cannot be encoded at all; a pool named so was accepted, then every request for
 * it answered 503 `keys_unavailable`, and a key made for it was stored with no marker (issue 24).
 * So the limit is checked where names come in, PUT /admin/settings and POST /admin/keys, before
 * anything is written.
 */
import { z } from "zod";

/** Workers KV's longest key name, in bytes of UTF-8. */
export const KV_KEY_MAX_BYTES = 512;

/** The KV name of a pool's key marker: this, then the model name. */
export const ENFORCED_MARKER_PREFIX = "client-keys:enforced:";

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).byteLength;

/** A model name's longest UTF-8 form: 512 less the marker's prefix, 491 bytes. */
export const MODEL_NAME_MAX_BYTES = KV_KEY_MAX_BYTES - utf8Bytes(ENFORCED_MARKER_PREFIX);

/** A lone surrogate: in `u` mode a pair is one code point, so `\p{Cs}` matches only lone halves. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * 1-256 characters (zod counts code points, not UTF-16 units), well-formed, at most
 * `MODEL_NAME_MAX_BYTES` of UTF-8.
 */
export const modelName = z
  .string()
  .min(1)
  .max(256)
  .refine(
    (name) => !LONE_SURROGATE.test(name),
    "must be well-formed Unicode: a lone surrogate (\\ud800-\\udfff unpaired) cannot be stored",
  )
  .refine((name) => LONE_SURROGATE.test(name) || utf8Bytes(name) <= MODEL_NAME_MAX_BYTES, {
    error: (issue) =>
      `must be at most ${MODEL_NAME_MAX_BYTES} bytes in UTF-8, not ${utf8Bytes(String(issue.input))} ` +
      `(its key marker "${ENFORCED_MARKER_PREFIX}<model>" is a Workers KV key name: ${KV_KEY_MAX_BYTES} bytes at most)`,
  });
