/** `GET /v1/models`: the models in settings, in OpenAI's list shape. */
import { Hono } from "hono";
import { currentSettings } from "../../settings/settings-cache.ts";
import type { AppEnv } from "../middleware/app-env.ts";

export const modelsRoutes = new Hono<AppEnv>().get("/models", async (c) => {
  const { settings, revision } = await currentSettings(c.env);
  const created = Math.floor(revision / 1000);
  return c.json({
    object: "list",
    data: Object.keys(settings.pools).map((id) => ({
      id,
      object: "model",
      created,
      owned_by: "llm-edge-router",
    })),
  });
});
