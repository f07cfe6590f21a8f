/**
 * `GET /v1/models`: the models in settings, in OpenAI's list shape: the pools open to anyone
 * (`access: "open"`, no key names them), and those the client's key may use. When every pool
 * needs a key, a request without a valid one is a 401; else it sees the open ones. Not counted
 * against a key's request rate.
 */
import { Hono } from "hono";
import {
  authenticate,
  credentialOf,
  enforcedEverywhere,
  isOpen,
  mayUse,
  presentedKey,
} from "../../access/client-access.ts";
import { currentSettings } from "../../settings/settings-cache.ts";
import type { AppEnv } from "../middleware/app-env.ts";

export const modelsRoutes = new Hono<AppEnv>().get("/models", async (c) => {
  const now = Date.now();
  const authorization = credentialOf(c.req.raw.headers);
  const client = (await enforcedEverywhere(c.env, now))
    ? await authenticate(c.env, authorization, now)
    : await presentedKey(c.env, authorization, now);
  const { settings, revision } = await currentSettings(c.env);
  const created = Math.floor(revision / 1000);
  const models = Object.entries(settings.pools);
  const open = await Promise.all(models.map(([id, pool]) => isOpen(c.env, id, pool.access, now)));
  return c.json({
    object: "list",
    data: models
      .filter(([id], i) => open[i] || (client !== null && mayUse(client, id)))
      .map(([id]) => ({ id, object: "model", created, owned_by: "llm-edge-router" })),
  });
});
