/**
 * `POST /v1/engine/events`: signed batches of engine events (load, capacity, cache-reset,
 * health; schema `engineEventBatch` in the core) for one origin, applied by every pool that
 * lists the origin. Status codes tell a reporter what to do: 401 fix the signature or clock,
 * 400 fix the payload, 404 fix the origin id or the settings, 503 retry later.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { engineEventBatch } from "../../core/engine-events.ts";
import { formatSettingsErrors } from "../../core/settings/parse-settings.ts";
import type { AppEnv } from "../app-env.ts";
import { ApiError, invalidRequest } from "../errors/api-error.ts";
import { ingestOnObject, poolStub } from "../routing/pool-object.ts";
import { withDeadline } from "../routing/with-deadline.ts";
import { currentSettings } from "../settings/settings-cache.ts";
import { SIGNATURE_HEADER, verifySignature } from "../webhooks/verify-signature.ts";

/** A batch holds at most 100 small events; anything near this is not a report. */
const MAX_BATCH_BYTES = 64 * 1024;
/** Reporters retry on 503, so an object that is slow to answer is not waited on for long. */
const INGEST_TIMEOUT_MS = 5000;

export const engineEventsRoutes = new Hono<AppEnv>().post(
  "/engine/events",
  bodyLimit({
    maxSize: MAX_BATCH_BYTES,
    onError: () => {
      throw new ApiError(413, "invalid_request_error", "request_too_large", "batch too large");
    },
  }),
  async (c) => {
    const raw = await c.req.arrayBuffer();
    const secret = c.env.WEBHOOK_SECRET;
    if (!secret) console.error("engine events: WEBHOOK_SECRET is not set; rejecting all");
    const check = secret
      ? await verifySignature(secret, c.req.header(SIGNATURE_HEADER), raw, Date.now() / 1000)
      : ({ ok: false, reason: "missing" } as const);
    if (!check.ok) {
      throw new ApiError(
        401,
        "authentication_error",
        `signature_${check.reason}`,
        `${SIGNATURE_HEADER} is ${check.reason}`,
      );
    }
    let input: unknown;
    try {
      input = JSON.parse(new TextDecoder().decode(raw));
    } catch {
      throw invalidRequest("invalid_json", "request body is not valid JSON");
    }
    const parsed = engineEventBatch.safeParse(input);
    if (!parsed.success) {
      const errors = parsed.error.issues.map((issue) => ({
        field: issue.path.map(String).join(".") || "(body)",
        reason: issue.message,
      }));
      throw new ApiError(
        400,
        "invalid_request_error",
        "invalid_events",
        formatSettingsErrors(errors),
        {
          details: errors,
        },
      );
    }
    const { origin, events } = parsed.data;
    const settings = await currentSettings(c.env);
    const models = Object.entries(settings.settings.pools)
      .filter(([, pool]) => pool.origins.some((o) => o.id === origin))
      .map(([model]) => model);
    if (models.length === 0) {
      throw new ApiError(
        404,
        "not_found_error",
        "origin_not_found",
        `no pool has origin '${origin}'`,
      );
    }
    await Promise.all(
      models.map(async (model) => {
        const ref = { model, pool: settings.pool(model)!, version: settings.version(model) };
        try {
          await withDeadline(
            ingestOnObject(poolStub(c.env, ref), ref, origin, events),
            INGEST_TIMEOUT_MS,
          );
        } catch (error) {
          console.warn(`engine events for ${model}: ${String(error)}`);
          throw new ApiError(503, "server_error", "router_unavailable", "try again later", {
            headers: { "retry-after": "1" },
          });
        }
      }),
    );
    return c.json({ accepted: events.length, models });
  },
);
