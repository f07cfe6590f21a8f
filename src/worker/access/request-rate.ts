/**
 * @module
 * Requests per minute per key, counted by Cloudflare's rate-limiting binding of the key's tier
 * (`KEY_RPM_<n>` in wrangler.toml, keyed by the key's id). The binding counts per Cloudflare
 * location and from a cache, so the limit is approximate and per location: a key used from
 * two locations gets up to twice its tier (docs/api.md, "Rate limits"). It does not say when
 * its window ends; windows of one period are taken as aligned to the clock, as `wrangler dev`
 * runs them, so `Retry-After` is the time to the next whole minute (at most 60 s).
 *
 * A limiter that fails, or a tier whose binding is missing, lets the request through and logs
 * why: a limit protects the fleet's share, and the router never fails a request because its
 * own bookkeeping is unavailable. `POST /admin/keys` refuses a tier without its binding.
 */
import { rateLimited } from "./access-errors.ts";
import { type ClientKeyRecord, type RpmTier, tierBinding } from "./key-record.ts";

const PERIOD_MS = 60_000;

/** The binding counting `tier`, if this Worker has it. */
export function tierLimiter(env: Env, tier: RpmTier): RateLimit | undefined {
  const binding = (env as unknown as Record<string, unknown>)[tierBinding(tier)];
  return typeof (binding as RateLimit | undefined)?.limit === "function"
    ? (binding as RateLimit)
    : undefined;
}

/** Count one request of `key`; throws the 429 when its tier's limit is reached. */
export async function checkRequestRate(env: Env, key: ClientKeyRecord, now: number): Promise<void> {
  const tier = key.limits.requestsPerMinute;
  if (tier === null) return;
  const limiter = tierLimiter(env, tier);
  let success = true;
  try {
    if (!limiter) throw new Error(`binding ${tierBinding(tier)} is missing (wrangler.toml)`);
    ({ success } = await limiter.limit({ key: key.id }));
  } catch (error) {
    console.error(`client key ${key.id}: request rate not checked: ${String(error)}`);
  }
  if (success) return;
  throw rateLimited({
    kind: "requests",
    keyId: key.id,
    limit: tier,
    retryAfterMs: PERIOD_MS - (now % PERIOD_MS),
  });
}
