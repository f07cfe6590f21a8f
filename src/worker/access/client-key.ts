/**
 * @module
 * A client key's text: `sk-router-<id>_<secret>`. `id` (16 hex digits, 64 random bits) names
 * the key in KV, logs and metrics; `secret` is 32 random bytes in base64url. The router keeps
 * only the SHA-256 of the whole key, so KV never holds a usable key. Carrying the id in the key
 * lets the edge find its record with one lookup and an operator revoke it by id, as Stripe's
 * and GitHub's prefixed tokens do; the id alone grants nothing. Random bytes come from
 * `crypto.getRandomValues`, the platform's CSPRNG.
 */

export const KEY_PREFIX = "sk-router-";

const ID = /^[0-9a-f]{16}$/;
const KEY = /^sk-router-([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/;

export interface NewClientKey {
  readonly id: string;
  /** The key itself: shown to the operator once, never stored. */
  readonly key: string;
  /** Hex SHA-256 of `key`: what KV holds. */
  readonly hash: string;
}

const hex = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

export async function newClientKey(): Promise<NewClientKey> {
  const id = hex(crypto.getRandomValues(new Uint8Array(8)));
  const key = `${KEY_PREFIX}${id}_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
  return { id, key, hash: await keyHash(key) };
}

export const isKeyId = (id: string): boolean => ID.test(id);

/** The id a well-formed key carries, else null (the edge then refuses it unread). */
export function keyIdOf(key: string): string | null {
  return KEY.exec(key)?.[1] ?? null;
}

export async function keyHash(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return hex(new Uint8Array(digest));
}

/** Whether `key` hashes to `hash`, compared in constant time. */
export async function keyMatches(key: string, hash: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const a = encoder.encode(await keyHash(key));
  const b = encoder.encode(hash);
  return a.byteLength === b.byteLength && crypto.subtle.timingSafeEqual(a, b);
}
