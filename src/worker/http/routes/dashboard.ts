/**
 * `GET /dashboard`: the live page (src/worker/dashboard/). Served without a token because it
 * holds nothing: every figure comes from `GET /admin/state`, which needs the admin token the
 * page asks for. Never cached; never framed (CSP `frame-ancestors`).
 */
import { Hono } from "hono";
import { dashboardPage } from "../../dashboard/dashboard-page.ts";
import type { AppEnv } from "../middleware/app-env.ts";

export const dashboardRoutes = new Hono<AppEnv>().get("/dashboard", (c) => {
  const nonce = crypto.randomUUID().replace(/-/g, "");
  const { html, csp } = dashboardPage(nonce);
  return c.html(html, 200, {
    "content-security-policy": csp,
    "cache-control": "no-store",
  });
});
