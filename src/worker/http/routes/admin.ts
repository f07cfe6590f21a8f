/**
 * The admin API, behind `Authorization: Bearer <ADMIN_TOKEN>` (Hono's bearerAuth, constant-time):
 * - GET /admin/settings: the settings document in force (defaults filled in).
 * - PUT /admin/settings: validate fully, write KV under a new revision, use at once in this
 *   isolate and push to every pool's object; answers the revision it wrote. An invalid document
 *   changes nothing and lists each bad field. KV has no compare-and-swap: of two PUTs at once,
 *   KV keeps the last to arrive (docs/api.md, "Concurrent writers").
 * - GET /admin/state?model=: the pool's origins, load, health, index, recent decisions, metrics,
 *   as the object sees them, plus this isolate's settings status and fallback router
 *   (observability/pool-state.ts); without `model`, every pool's (the dashboard polls this).
 * - /admin/keys: client keys (admin-keys.ts).
 */
import { Hono } from "hono";
import { formatSettingsErrors, parseSettings } from "../../../core/settings/parse-settings.ts";
import { frontFor } from "../../coordination/front.ts";
import { ApiError, modelNotFound } from "../../errors/api-error.ts";
import { withDeadline } from "../../objects/with-deadline.ts";
import { OBJECT_TIMEOUT_MS, poolState, poolStates } from "../../observability/pool-state.ts";
import { missingSecrets } from "../../settings/check-secrets.ts";
import {
  currentSettings,
  loadSettings,
  SETTINGS_KEY,
  type SettingsMetadata,
  settingsCache,
} from "../../settings/settings-cache.ts";
import type { AppEnv } from "../middleware/app-env.ts";
import { bearerGuard } from "../middleware/bearer-guard.ts";
import { limitBody } from "../middleware/body-limit.ts";
import { jsonBody } from "../middleware/json-body.ts";
import { adminKeysRoutes } from "./admin-keys.ts";

const MAX_SETTINGS_BYTES = 4 * 1024 * 1024;

const adminAuth = bearerGuard({
  tokens: (env) => [env.ADMIN_TOKEN],
  disabled: "admin API is disabled",
});

interface PutResult {
  /** The revision this PUT wrote, whatever other PUTs did meanwhile. */
  revision: number;
  /** Per model: "applied" (the object took them) or "pending" (it will on its next request). */
  pools: Record<string, string>;
}

/** Validate `input` (the document `text` parsed) fully, then write, adopt and push it. */
async function putSettings(env: Env, text: string, input: unknown): Promise<PutResult> {
  const parsed = parseSettings(input);
  const errors = parsed.ok ? missingSecrets(parsed.value, env) : parsed.errors;
  if (!parsed.ok || errors.length > 0) {
    throw new ApiError(
      400,
      "invalid_request_error",
      "invalid_settings",
      formatSettingsErrors(errors),
      {
        details: errors,
      },
    );
  }
  // Everything below uses this PUT's own revision and settings, never the isolate's current
  // ones: a concurrent PUT may replace those at any await.
  const now = Date.now();
  const revision = settingsCache.nextRevision(now);
  const loaded = loadSettings(parsed.value, revision, now);
  const metadata: SettingsMetadata = { revision };
  await env.SETTINGS.put(SETTINGS_KEY, text, { metadata });
  settingsCache.adopt(loaded, text);
  const pushed = await Promise.all(
    Object.entries(parsed.value.pools).map(async ([model, pool]) => {
      const ref = { model, pool, version: loaded.version(model) };
      try {
        await withDeadline(frontFor(env, ref).pushSettings(), OBJECT_TIMEOUT_MS);
        return [model, "applied"] as const;
      } catch (error) {
        // The object takes them on its next request instead (see objects/rpc-types.ts).
        console.warn(`settings push to ${model} failed: ${String(error)}`);
        return [model, "pending"] as const;
      }
    }),
  );
  return { revision, pools: Object.fromEntries(pushed) };
}

export const adminRoutes = new Hono<AppEnv>()
  .use(adminAuth)
  .get("/settings", async (c) => {
    const { settings, revision } = await currentSettings(c.env);
    return c.json(settings, 200, { "x-settings-revision": String(revision) });
  })
  .put(
    "/settings",
    limitBody({ maxBytes: MAX_SETTINGS_BYTES, what: "settings document" }),
    jsonBody({ what: "settings document" }),
    async (c) => c.json(await putSettings(c.env, await c.req.text(), c.get("json"))),
  )
  .get("/state", async (c) => {
    const model = c.req.query("model");
    if (model === undefined) return c.json({ pools: await poolStates(c.env) });
    const state = await poolState(c.env, await currentSettings(c.env), model);
    if (!state) throw modelNotFound(model);
    return c.json(state);
  })
  .route("/keys", adminKeysRoutes);
