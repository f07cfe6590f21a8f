/**
 * `GET /metrics`: Prometheus text exposition of every pool (observability/pool-exposition.ts),
 * behind `Authorization: Bearer <METRICS_TOKEN>` (optional secret, so a scraper need not hold
 * the admin token) or `<ADMIN_TOKEN>`, compared in constant time by Hono's bearerAuth. Each
 * scrape asks every pool's object for its state, in parallel.
 */
import { Hono, type MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { ApiError } from "../../errors/api-error.ts";
import { MetricsWriter, PROMETHEUS_CONTENT_TYPE } from "../../observability/exposition.ts";
import { writeMetrics } from "../../observability/pool-exposition.ts";
import { poolStates } from "../../observability/pool-state.ts";
import type { AppEnv } from "../middleware/app-env.ts";

const metricsAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const tokens = [c.env.METRICS_TOKEN, c.env.ADMIN_TOKEN].filter(
    (t): t is string => typeof t === "string" && t.length > 0,
  );
  if (tokens.length === 0) {
    throw new ApiError(401, "authentication_error", "unauthorized", "metrics are disabled");
  }
  return bearerAuth<AppEnv>({ token: tokens })(c, next);
};

export const metricsRoutes = new Hono<AppEnv>().get("/metrics", metricsAuth, async (c) => {
  const writer = new MetricsWriter();
  writeMetrics(writer, await poolStates(c.env));
  return c.body(writer.text(), 200, {
    "content-type": PROMETHEUS_CONTENT_TYPE,
    "cache-control": "no-store",
  });
});
