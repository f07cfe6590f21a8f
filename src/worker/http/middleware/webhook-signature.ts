/**
 * @module
 * The signature check of the webhook route, before anything reads the payload: the raw body
 * must carry an `x-router-signature` made with `WEBHOOK_SECRET` within the window
 * (src/core/webhook-signature.ts), else a 401 `signature_<missing|malformed|stale|mismatch>`.
 * A Worker without the secret refuses every webhook (and logs why) rather than trusting any.
 */
import type { MiddlewareHandler } from "hono";
import { BATCH_WINDOW_MS } from "../../../core/engine-events.ts";
import {
  SIGNATURE_HEADER,
  type SignatureCheck,
  verifySignature,
} from "../../../core/webhook-signature.ts";
import { ApiError } from "../../errors/api-error.ts";
import type { AppEnv } from "./app-env.ts";

type Refusal = Exclude<SignatureCheck, { ok: true }>["reason"];

/** What each refusal tells the sender: what is wrong, and what to do (docs/api.md). */
const MESSAGES: Record<Refusal, string> = {
  missing: `the ${SIGNATURE_HEADER} header is missing: sign each batch with the router's webhook secret (docs/api.md, "POST /v1/engine/events")`,
  malformed: `the ${SIGNATURE_HEADER} header is malformed: expected t=<unix seconds>,v1=<64 hex digits>`,
  stale: `the ${SIGNATURE_HEADER} timestamp is more than ${BATCH_WINDOW_MS / 1000} s away from the router's clock: sign each attempt as it is sent, and check the sender's clock`,
  mismatch: `the ${SIGNATURE_HEADER} signature does not match the body: sign "<t>.<raw body>" with HMAC-SHA256 and the router's webhook secret, and send the body exactly as signed`,
};
const NO_SECRET =
  "this router has no webhook secret set (WEBHOOK_SECRET), so it refuses every webhook";

export function webhookSignature(): MiddlewareHandler<AppEnv> {
  return async function webhookSignature(c, next) {
    const secret = c.env.WEBHOOK_SECRET;
    if (!secret) {
      console.error(`${c.req.path}: WEBHOOK_SECRET is not set; rejecting all`);
      throw new ApiError(401, "authentication_error", "signature_missing", NO_SECRET);
    }
    const check = await verifySignature(
      secret,
      c.req.header(SIGNATURE_HEADER),
      await c.req.arrayBuffer(),
      Date.now() / 1000,
    );
    if (!check.ok) {
      throw new ApiError(
        401,
        "authentication_error",
        `signature_${check.reason}`,
        MESSAGES[check.reason],
      );
    }
    await next();
  };
}
