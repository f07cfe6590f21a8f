/**
 * `POST /v1/engine/events`: signed batches of engine events (load, capacity, cache-reset,
 * health; schema `engineEventBatch` in the core) for one origin, applied by every pool that
 * lists the origin (by its Durable Object, or an edge pool's root), each pool at most once per
 * batch id and only if it is the origin's newest (`BatchLedger`). Status codes tell a reporter
 * what to do: 200 done (also for a batch applied before, `duplicate: true`, so a retry after a
 * lost response ends), 401 fix the signature or clock, 400 fix the payload (or the clock: `at`
 * over 5 minutes behind or 5 s ahead of the router's), 404 fix the origin id or the settings,
 * 409 the batch is older than one applied (send its state in a new batch made after
 * `details.lastAppliedAt`), 503 retry the same batch later.
 */
import { Hono } from "hono";
import type { z } from "zod";
import { BATCH_AHEAD_MS, BATCH_WINDOW_MS, engineEventBatch } from "../../../core/engine-events.ts";
import { formatSettingsErrors } from "../../../core/settings/parse-settings.ts";
import { frontFor } from "../../coordination/front.ts";
import { ApiError, invalidRequest } from "../../errors/api-error.ts";
import type { IngestOutcome } from "../../objects/rpc-types.ts";
import { withDeadline } from "../../objects/with-deadline.ts";
import { currentSettings } from "../../settings/settings-cache.ts";
import type { AppEnv } from "../middleware/app-env.ts";
import { limitBody } from "../middleware/body-limit.ts";
import { jsonBody } from "../middleware/json-body.ts";
import { webhookSignature } from "../middleware/webhook-signature.ts";

/** A batch holds at most 100 small events; anything near this is not a report. */
const MAX_BATCH_BYTES = 64 * 1024;
/** Reporters retry on 503, so an object that is slow to answer is not waited on for long. */
const INGEST_TIMEOUT_MS = 5000;

export const engineEventsRoutes = new Hono<AppEnv>().post(
  "/engine/events",
  limitBody({ maxBytes: MAX_BATCH_BYTES, what: "webhook batch" }),
  webhookSignature(),
  jsonBody({ what: "webhook batch" }),
  async (c) => {
    const input = c.get("json");
    const parsed = engineEventBatch.safeParse(input);
    if (!parsed.success) throw invalidBatch(input, parsed.error.issues);
    const batch = parsed.data;
    const { origin, id, at, events } = batch;
    checkAt(at, Date.now());
    const settings = await currentSettings(c.env);
    const models = Object.entries(settings.settings.pools)
      .filter(([, pool]) => pool.origins.some((o) => o.id === origin))
      .map(([model]) => model);
    if (models.length === 0) {
      throw new ApiError(
        404,
        "not_found_error",
        "origin_not_found",
        `no pool lists origin '${origin}': send the origin's id exactly as the settings name it in a pool's origins`,
      );
    }
    const outcomes = await Promise.all(
      models.map(async (model) => {
        const ref = { model, pool: settings.pool(model)!, version: settings.version(model) };
        try {
          return await withDeadline(frontFor(c.env, ref).ingest(batch), INGEST_TIMEOUT_MS);
        } catch (error) {
          console.warn(`engine events for ${model}: ${String(error)}`);
          throw new ApiError(
            503,
            "server_error",
            "router_unavailable",
            `the router could not apply the batch for ${model} in time: send the same batch again after Retry-After`,
            { headers: { "retry-after": "1" } },
          );
        }
      }),
    );
    // An object's clock may differ from this isolate's by a little: its verdict stands.
    const verdicts = outcomes.map((o) => o.verdict);
    if (verdicts.includes("ahead")) throw aheadOfClock(at, Date.now());
    const stale = models.filter((_, i) => verdicts[i] === "stale");
    if (stale.length > 0) {
      console.warn(`engine events: batch ${id} of ${origin} is stale in ${stale.join(", ")}`);
      throw new ApiError(
        409,
        "invalid_request_error",
        "stale_batch",
        `batch ${id} of origin '${origin}' was made (at ${at}) no later than the last batch applied for that origin in ${stale.join(", ")}, so its events were not applied there: send their current state in a new batch`,
        { param: "at", details: { lastAppliedAt: lastApplied(outcomes) } },
      );
    }
    const applied = verdicts.includes("applied");
    return c.json({
      accepted: applied ? events.length : 0,
      models,
      duplicate: !applied && verdicts.includes("duplicate"),
    });
  },
);

/**
 * The latest `at` of the origin's last applied batch in the pools that found a batch stale (null
 * if none knows it): a sender makes its next batch later than this (tools/reporter/deliver.ts),
 * so a clock set back across a reporter restart costs one refused batch, not the time until the
 * clock passes it. Only a holder of the webhook secret gets this far.
 */
function lastApplied(outcomes: readonly IngestOutcome[]): number | null {
  const known = outcomes.flatMap((o) => (typeof o.lastAt === "number" ? [o.lastAt] : []));
  return known.length > 0 ? Math.max(...known) : null;
}

/**
 * Refuses (400 naming `at`) a batch made too long ago (`BATCH_WINDOW_MS`) or too far ahead of
 * the router's clock (`BATCH_AHEAD_MS`: clock skew and no more, so that a batch made ahead
 * cannot hold off the origin's later ones; core/batch-ledger.ts).
 */
function checkAt(at: number, now: number): void {
  if (now - at > BATCH_WINDOW_MS) {
    throw invalidRequest(
      "invalid_value",
      `at: ${at} is ${seconds(now - at)} s behind the router's clock; a batch must be sent within ${BATCH_WINDOW_MS / 1000} s of being made (check the sender's clock)`,
      "at",
    );
  }
  if (at - now > BATCH_AHEAD_MS) throw aheadOfClock(at, now);
}

function aheadOfClock(at: number, now: number): ApiError {
  return invalidRequest(
    "invalid_value",
    `at: ${at} is ${seconds(at - now)} s ahead of the router's clock; a batch may be made at most ${BATCH_AHEAD_MS / 1000} s ahead of it (check the sender's clock)`,
    "at",
  );
}

const seconds = (ms: number) => Math.max(1, Math.round(ms / 1000));

/**
 * A 400 naming the first bad field: `missing_required_parameter` when it is absent (a sender of
 * the format before batch ids is told what to add), else `invalid_events`; `details` lists all.
 */
function invalidBatch(input: unknown, issues: readonly z.core.$ZodIssue[]): ApiError {
  const errors = issues.map((issue) => ({
    field: issue.path.map(String).join(".") || "(body)",
    reason: issue.message,
  }));
  const first = issues[0];
  const param = first?.path.map(String).join(".") || undefined;
  const missing =
    first?.code === "invalid_type" &&
    first.path.length === 1 &&
    typeof input === "object" &&
    input !== null &&
    (input as Record<PropertyKey, unknown>)[first.path[0] as PropertyKey] === undefined;
  const hint =
    param === "id" || param === "at"
      ? ": every batch carries a unique id and the time it was made (at, ms since the epoch) inside the signed body, so that a replay is refused; update the sender (see docs/api.md)"
      : "";
  return new ApiError(
    400,
    "invalid_request_error",
    missing ? "missing_required_parameter" : "invalid_events",
    missing ? `${param} is required${hint}` : formatSettingsErrors(errors),
    { details: errors, ...(param === undefined ? {} : { param }) },
  );
}
