/**
 * @module
 * The client-key checks of an LLM request, in the order they run (docs/architecture.md, "One
 * request"), each a 4xx in OpenAI's shape (access-errors.ts). A pool needs a key once a key
 * names it, every pool once a key names `*` (key-store.ts). A pool no key names serves no one
 * (403 `pool_closed`) unless its settings say `access: "open"`: then anyone, and the
 * `Authorization` its clients send is ignored.
 * 1. `authenticate`: `Authorization: Bearer <key>` (on the Messages API also `x-api-key: <key>`,
 *    as Anthropic's clients send it: `anthropicCredential`) must name a key whose SHA-256
 *    matches. When
 *    every pool needs a key it runs before the body is read (http/middleware/client-key.ts);
 *    else once the body names the model, and only if that pool needs one (`keyFor`).
 * 2. The request rate (request-rate.ts), right after.
 * 3. `checkModel`: the key must list the model (or `*`).
 * 4. `spendPromptTokens`, once the prompt is hashed: its estimate against the key's budget in
 *    this isolate (token-budget.ts), settled at the engine's count once the answer has one.
 * Keys and enforcement come from this isolate's cache over KV (key-cache.ts), refreshed after
 * `SETTINGS_CACHE_MS`: no KV read on most requests, and no object call on any.
 */
import type { Priority, RouteClient } from "../../core/route-request.ts";
import type { PoolSettings } from "../../core/settings/settings-schema.ts";
import { ApiError } from "../errors/api-error.ts";
import { settingsTtl } from "../settings/settings-cache.ts";
import {
  invalidKey,
  missingKey,
  modelNotAllowed,
  poolClosed,
  rateLimited,
  SEND_AS_BEARER,
} from "./access-errors.ts";
import { keyIdOf, keyMatches } from "./client-key.ts";
import { keyCache } from "./key-cache.ts";
import { ANY_MODEL, type ClientKeyRecord } from "./key-record.ts";
import { tokenBudgets } from "./token-budget.ts";

const BEARER = /^Bearer +(\S+) *$/i;

/** How a route reads the credential a request presents, as an `Authorization` value. */
export interface CredentialOf {
  (headers: Headers): string | undefined;
  /** Where the route's clients send a key, as the missing-key 401 tells them. */
  readonly sendAs: string;
}

/** OpenAI's APIs: `Authorization` alone (OpenAI's clients send nothing else). */
export const bearerCredential: CredentialOf = Object.assign(
  (headers: Headers) => headers.get("authorization") ?? undefined,
  { sendAs: SEND_AS_BEARER },
);

/**
 * Anthropic's Messages API: `Authorization`, as Claude Code sends `ANTHROPIC_AUTH_TOKEN`, else
 * `x-api-key` as a bearer token, as Anthropic's SDKs send their key (Claude Code
 * `ANTHROPIC_API_KEY`). Neither header reaches an origin (forward/origin-request.ts).
 */
export const anthropicCredential: CredentialOf = Object.assign(
  (headers: Headers) => {
    const authorization = headers.get("authorization");
    if (authorization !== null) return authorization;
    const key = headers.get("x-api-key");
    return key === null ? undefined : `Bearer ${key}`;
  },
  { sendAs: `'x-api-key: <key>' or ${SEND_AS_BEARER}` },
);

type PoolAccess = PoolSettings["access"];

/** Whether every pool needs a key (a key named `*`), as this isolate knows it. */
export function enforcedEverywhere(env: Env, now: number): Promise<boolean> {
  return keyCache.enforcedEverywhere(env.SETTINGS, settingsTtl(env), now);
}

/** Whether pool `model` needs a key, as this isolate knows it. */
function enforcedFor(env: Env, model: string, now: number): Promise<boolean> {
  return keyCache.enforcedFor(env.SETTINGS, model, settingsTtl(env), now);
}

/**
 * The key `authorization` presents; a 401 if it is missing (telling the client to send it as
 * `sendAs`: `CredentialOf.sendAs`), unknown, revoked or wrong.
 */
export async function authenticate(
  env: Env,
  authorization: string | undefined,
  now: number,
  sendAs?: string,
): Promise<ClientKeyRecord> {
  const key = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
  if (key === undefined) throw missingKey(sendAs);
  const id = keyIdOf(key);
  const record =
    id === null ? null : await keyCache.record(env.SETTINGS, id, settingsTtl(env), now);
  if (record === null || !(await keyMatches(key, record.hash))) throw invalidKey();
  return record;
}

/** Whether pool `model` serves clients without a key: `access: "open"`, and no key names it. */
export async function isOpen(
  env: Env,
  model: string,
  access: PoolAccess,
  now: number,
): Promise<boolean> {
  return access === "open" && !(await enforcedFor(env, model, now));
}

/**
 * The key a request for pool `model` must present (a 401 without one), or null if the pool is
 * open. A pool no key names is open only with `access: "open"`; else it is closed (403
 * `pool_closed`) but to a valid key that may use it: a key made in another location within
 * KV's minute may name the pool before its marker is seen here.
 */
export async function keyFor(
  env: Env,
  model: string,
  access: PoolAccess,
  authorization: string | undefined,
  now: number,
  sendAs?: string,
): Promise<ClientKeyRecord | null> {
  if (await enforcedFor(env, model, now)) return authenticate(env, authorization, now, sendAs);
  if (access === "open") return null;
  const key = await presentedKey(env, authorization, now);
  if (key === null || !mayUse(key, model)) throw poolClosed(model);
  return key;
}

/** The key presented, if valid, else null: never a 401 (`GET /v1/models` of open pools). */
export async function presentedKey(
  env: Env,
  authorization: string | undefined,
  now: number,
): Promise<ClientKeyRecord | null> {
  try {
    return await authenticate(env, authorization, now);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

export const mayUse = (key: ClientKeyRecord, model: string): boolean =>
  key.models.includes(model) || key.models.includes(ANY_MODEL);

export function checkModel(key: ClientKeyRecord, model: string): void {
  if (!mayUse(key, model)) throw modelNotAllowed(model);
}

/** Corrects a spent estimate to the prompt tokens the engine counted, at `now`. */
export type SettlePromptTokens = (engineTokens: number, now: number) => void;

const unlimited: SettlePromptTokens = () => {};

/**
 * A count the bucket can take: whole and at most 1e9 (no engine holds such a prompt), so that
 * token-budget.ts's figures stay exact integers whatever an origin reports.
 */
const MAX_ENGINE_TOKENS = 1e9;
const isCount = (n: number) => Number.isInteger(n) && n >= 0 && n <= MAX_ENGINE_TOKENS;

/**
 * Spend `tokens` (the edge's estimate) of the key's budget; a 429 while it is in debt. Returns
 * how to settle it once the engine has counted the prompt: the difference charged or refunded
 * to the same bucket.
 */
export function spendPromptTokens(
  key: ClientKeyRecord,
  tokens: number,
  now: number,
): SettlePromptTokens {
  const perMinute = key.limits.promptTokensPerMinute;
  if (perMinute === null) return unlimited;
  const spent = tokenBudgets.spend(key.id, perMinute, tokens, now);
  if (spent.ok) {
    return (engineTokens, at) => {
      if (isCount(engineTokens)) tokenBudgets.settle(key.id, perMinute, engineTokens - tokens, at);
    };
  }
  throw rateLimited({
    kind: "tokens",
    keyId: key.id,
    limit: perMinute,
    retryAfterMs: spent.retryAfterMs,
  });
}

/**
 * What routing (admission's fair share and shedding order) is told of the client: the key's id,
 * never the key, and its priority, which the request may lower to `batch` (`x-router-priority`)
 * but never raise: a batch key's clients cannot jump the queue.
 */
export const routeClient = (key: ClientKeyRecord, requested: Priority): RouteClient => ({
  key: key.id,
  priority: key.priority === "batch" ? "batch" : requested,
});
