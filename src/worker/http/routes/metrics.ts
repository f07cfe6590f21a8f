/**
 * `GET /metrics`: Prometheus text exposition of every pool (observability/pool-exposition.ts),
 * behind `Authorization: Bearer <METRICS_TOKEN>` (optional secret, so a scraper need not hold
 * the admin token) or `<ADMIN_TOKEN>`, compared in constant time by Hono's bearerAuth. Each
 * scrape asks every pool's object for its state, in parallel.
 */
import { Hono } from "hono";
import { MetricsWriter, PROMETHEUS_CONTENT_TYPE } from "../../observability/exposition.ts";
import { writeMetrics } from "../../observability/pool-exposition.ts";
import { poolStates } from "../../observability/pool-state.ts";
import type { AppEnv } from "../middleware/app-env.ts";
import { bearerGuard } from "../middleware/bearer-guard.ts";

const metricsAuth = bearerGuard({
  tokens: (env) => [env.METRICS_TOKEN, env.ADMIN_TOKEN],
  disabled: "metrics are disabled",
});

export const metricsRoutes = new Hono<AppEnv>().get("/metrics", metricsAuth, async (c) => {
  const writer = new MetricsWriter();
  writeMetrics(writer, await poolStates(c.env));
  return c.body(writer.text(), 200, {
    "content-type": PROMETHEUS_CONTENT_TYPE,
    "cache-control": "no-store",
  });
});
