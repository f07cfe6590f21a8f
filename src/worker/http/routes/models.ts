/**
 * `GET /v1/models`: the models in settings, in OpenAI's list shape; while client keys are
 * enforced, a key is needed and only the models it may use are listed.
 */
import { Hono } from "hono";
import { mayUse } from "../../access/client-access.ts";
import { currentSettings } from "../../settings/settings-cache.ts";
import type { AppEnv } from "../middleware/app-env.ts";
import { clientKey } from "../middleware/client-key.ts";

export const modelsRoutes = new Hono<AppEnv>().get(
  "/models",
  clientKey({ countRequest: false }),
  async (c) => {
    const { settings, revision } = await currentSettings(c.env);
    const client = c.get("client");
    const created = Math.floor(revision / 1000);
    return c.json({
      object: "list",
      data: Object.keys(settings.pools)
        .filter((id) => client === null || mayUse(client, id))
        .map((id) => ({ id, object: "model", created, owned_by: "llm-edge-router" })),
    });
  },
);
