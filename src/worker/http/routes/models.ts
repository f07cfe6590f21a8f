/**
 * `GET /v1/models`: the models in settings, in OpenAI's list shape: the pools that need no key,
 * and those the client's key may use. When every pool needs a key, a request without a valid one
 * is a 401; when only some do, it sees the open ones. Not counted against a key's request rate.
 */
import { Hono } from "hono";
import { authenticate, enforcement, mayUse, presentedKey } from "../../access/client-access.ts";
import { isEnforced } from "../../access/key-store.ts";
import { currentSettings } from "../../settings/settings-cache.ts";
import type { AppEnv } from "../middleware/app-env.ts";

export const modelsRoutes = new Hono<AppEnv>().get("/models", async (c) => {
  const now = Date.now();
  const enforced = await enforcement(c.env, now);
  const authorization = c.req.header("authorization");
  const client = enforced.all
    ? await authenticate(c.env, authorization, now)
    : enforced.models.size > 0
      ? await presentedKey(c.env, authorization, now)
      : null;
  const { settings, revision } = await currentSettings(c.env);
  const created = Math.floor(revision / 1000);
  return c.json({
    object: "list",
    data: Object.keys(settings.pools)
      .filter((id) => !isEnforced(enforced, id) || (client !== null && mayUse(client, id)))
      .map((id) => ({ id, object: "model", created, owned_by: "llm-edge-router" })),
  });
});
