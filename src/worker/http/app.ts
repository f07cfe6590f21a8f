/**
 * The Worker's HTTP surface: global middleware (request id, secure headers), the routes, and the
 * one error handler. Routes live one file each under `routes/`; the steps they
 * share under `middleware/`.
 */
import { Hono } from "hono";
import { requestId } from "hono/request-id";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "./middleware/app-env.ts";
import { notFound, onError } from "./on-error.ts";
import { adminRoutes } from "./routes/admin.ts";
import { completionsRoutes } from "./routes/completions.ts";
import { dashboardRoutes } from "./routes/dashboard.ts";
import { engineEventsRoutes } from "./routes/engine-events.ts";
import { healthzRoutes } from "./routes/healthz.ts";
import { messagesRoutes } from "./routes/messages.ts";
import { metricsRoutes } from "./routes/metrics.ts";
import { modelsRoutes } from "./routes/models.ts";
import { responsesRoutes } from "./routes/responses.ts";

export const app = new Hono<AppEnv>()
  .use(requestId())
  .use(secureHeaders())
  .route("/", healthzRoutes)
  .route("/", metricsRoutes)
  .route("/", dashboardRoutes)
  .route("/v1", completionsRoutes)
  .route("/v1", messagesRoutes)
  .route("/v1", modelsRoutes)
  .route("/v1", responsesRoutes)
  .route("/v1", engineEventsRoutes)
  .route("/admin", adminRoutes);

app.onError(onError);
app.notFound(notFound);
