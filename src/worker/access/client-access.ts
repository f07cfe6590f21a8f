/**
 * @module
 * The client-key checks of an LLM request, in the order they run (docs/architecture.md, "One
 * request"), each a 4xx in OpenAI's shape (access-errors.ts):
 * 1. `authenticate`, before the body is read: while no key was ever created every request
 *    passes (null); after, `Authorization: Bearer <key>` must name a key whose SHA-256 matches.
 * 2. `checkModel`, once the body names the model: the key must list it (or `*`).
 * 3. `spendPromptTokens`, once the prompt is hashed: its estimate against the key's budget in
 *    this isolate (token-budget.ts).
 * The request rate is counted between 1 and 2 (request-rate.ts).
 * Keys and enforcement come from this isolate's cache over KV (key-cache.ts), refreshed after
 * `SETTINGS_CACHE_MS`: no KV read on most requests, and no object call on any.
 */
import type { RouteClient } from "../../core/router/router-types.ts";
import { settingsTtl } from "../settings/settings-cache.ts";
import { invalidKey, missingKey, modelNotAllowed, rateLimited } from "./access-errors.ts";
import { keyIdOf, keyMatches } from "./client-key.ts";
import { keyCache } from "./key-cache.ts";
import { ANY_MODEL, type ClientKeyRecord } from "./key-record.ts";
import { tokenBudgets } from "./token-budget.ts";

const BEARER = /^Bearer +(\S+) *$/i;

/** The key `authorization` presents, or null while keys are not enforced; else a 401. */
export async function authenticate(
  env: Env,
  authorization: string | undefined,
  now: number,
): Promise<ClientKeyRecord | null> {
  const ttlMs = settingsTtl(env);
  if (!(await keyCache.enforced(env.SETTINGS, ttlMs, now))) return null;
  const key = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
  if (key === undefined) throw missingKey();
  const id = keyIdOf(key);
  const record = id === null ? null : await keyCache.record(env.SETTINGS, id, ttlMs, now);
  if (record === null || !(await keyMatches(key, record.hash))) throw invalidKey();
  return record;
}

export const mayUse = (key: ClientKeyRecord, model: string): boolean =>
  key.models.includes(model) || key.models.includes(ANY_MODEL);

export function checkModel(key: ClientKeyRecord, model: string): void {
  if (!mayUse(key, model)) throw modelNotAllowed(model);
}

/** Spend `tokens` (the edge's estimate) of the key's budget; a 429 while it is in debt. */
export function spendPromptTokens(key: ClientKeyRecord, tokens: number, now: number): void {
  const perMinute = key.limits.promptTokensPerMinute;
  if (perMinute === null) return;
  const spent = tokenBudgets.spend(key.id, perMinute, tokens, now);
  if (spent.ok) return;
  throw rateLimited({
    kind: "tokens",
    keyId: key.id,
    limit: perMinute,
    retryAfterMs: spent.retryAfterMs,
  });
}

/** What routing is told of the client (the key's id, never the key). */
export const routeClient = (key: ClientKeyRecord): RouteClient => ({
  key: key.id,
  priority: key.priority,
});
