/**
 * @module
 * The signature check of the webhook route, before anything reads the payload: the raw body
 * must carry an `x-router-signature` made with `WEBHOOK_SECRET` within the window
 * (src/core/webhook-signature.ts), else a 401 `signature_<missing|malformed|stale|mismatch>`.
 * A Worker without the secret refuses every webhook (and logs why) rather than trusting any.
 */
import type { MiddlewareHandler } from "hono";
import { SIGNATURE_HEADER, verifySignature } from "../../../core/webhook-signature.ts";
import { ApiError } from "../../errors/api-error.ts";
import type { AppEnv } from "./app-env.ts";

export function webhookSignature(): MiddlewareHandler<AppEnv> {
  return async function webhookSignature(c, next) {
    const secret = c.env.WEBHOOK_SECRET;
    if (!secret) console.error(`${c.req.path}: WEBHOOK_SECRET is not set; rejecting all`);
    const check = secret
      ? await verifySignature(
          secret,
          c.req.header(SIGNATURE_HEADER),
          await c.req.arrayBuffer(),
          Date.now() / 1000,
        )
      : ({ ok: false, reason: "missing" } as const);
    if (!check.ok) {
      throw new ApiError(
        401,
        "authentication_error",
        `signature_${check.reason}`,
        `${SIGNATURE_HEADER} is ${check.reason}`,
      );
    }
    await next();
  };
}
