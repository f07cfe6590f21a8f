/** `GET /healthz`: the Worker is up. Touches no binding, so it stays cheap and never flaps. */
import { Hono } from "hono";
import type { AppEnv } from "../middleware/app-env.ts";

export const healthzRoutes = new Hono<AppEnv>().get("/healthz", (c) => c.json({ status: "ok" }));
