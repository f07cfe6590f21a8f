/**
 * @module
 * The client-key step of the LLM routes (src/worker/access/). When every pool needs a key, the
 * request's key is checked and counted against its key's request rate here, before the body is
 * read, so a request without a key or over its rate costs no body read or parse; when only some
 * pools do, the handler does the same once the model is known (`admitKey`). Sets the context
 * variable `client` (the key's record, or null for an open pool) and the request record's
 * `client` (its log line and report carry the key's id).
 */
import type { MiddlewareHandler } from "hono";
import { authenticate, type CredentialOf, enforcedEverywhere } from "../../access/client-access.ts";
import type { ClientKeyRecord } from "../../access/key-record.ts";
import { checkRequestRate } from "../../access/request-rate.ts";
import type { RequestRecord } from "../../request-record/request-record.ts";
import type { AppEnv } from "./app-env.ts";

/** The request is `key`'s: on its record (log line, report), then counted against its rate. */
export async function admitKey(
  env: Env,
  record: RequestRecord | undefined,
  key: ClientKeyRecord,
  now: number,
): Promise<void> {
  record?.identified(key.id, key.priority);
  await checkRequestRate(env, key, now);
}

export interface ClientKeyOptions {
  /** Where the route's clients send their key (`Authorization`; Anthropic's also `x-api-key`). */
  credential: CredentialOf;
}

export function clientKey({ credential }: ClientKeyOptions): MiddlewareHandler<AppEnv> {
  return async function clientKey(c, next) {
    c.set("client", null);
    const now = Date.now();
    if (await enforcedEverywhere(c.env, now)) {
      const key = await authenticate(c.env, credential(c.req.raw.headers), now, credential.sendAs);
      c.set("client", key);
      await admitKey(c.env, c.get("record"), key, now);
    }
    await next();
  };
}
