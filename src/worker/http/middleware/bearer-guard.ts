/**
 * @module
 * The bearer-token guard of the operator routes (`/admin/*`, `/metrics`): Hono's `bearerAuth`,
 * which compares in constant time, over the tokens the Worker's secrets hold. With no token set
 * the routes are closed, never open: a 401 saying they are disabled, and an error in the log.
 */
import type { MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { ApiError } from "../../errors/api-error.ts";
import type { AppEnv } from "./app-env.ts";

export interface BearerGuardOptions {
  /** The secrets whose values are accepted; unset or empty ones are skipped. */
  tokens: (env: Env) => readonly (string | undefined)[];
  /** The 401's message when none is set, e.g. "admin API is disabled". */
  disabled: string;
}

export function bearerGuard({ tokens, disabled }: BearerGuardOptions): MiddlewareHandler<AppEnv> {
  return async function bearerGuard(c, next) {
    const token = tokens(c.env).filter((t): t is string => typeof t === "string" && t !== "");
    if (token.length === 0) {
      console.error(`${c.req.path}: no token is set; rejecting all (${disabled})`);
      throw new ApiError(401, "authentication_error", "unauthorized", disabled);
    }
    return bearerAuth<AppEnv>({ token })(c, next);
  };
}
