/**
 * Client keys, under the admin API's bearer token (mounted at `/admin/keys` by admin.ts):
 * - POST /admin/keys: validate, make a key, store its SHA-256 (never the key) in KV, answer 201
 *   with the key, shown this once;
 * - GET /admin/keys?cursor=: the keys, without their hashes, 100 a page;
 * - DELETE /admin/keys/{id}: revoke; refused at once by this isolate, elsewhere within KV's
 *   propagation plus an isolate's cache (docs/api.md, "Client keys").
 * A bad body is a 400 naming each bad field, and stores nothing.
 */
import { Hono } from "hono";
import type { z } from "zod";
import { formatSettingsErrors } from "../../../core/settings/parse-settings.ts";
import { isKeyId, newClientKey } from "../../access/client-key.ts";
import { keyCache } from "../../access/key-cache.ts";
import {
  type ClientKeyRecord,
  inputErrors,
  newKeyInput,
  publicKey,
  tierBinding,
} from "../../access/key-record.ts";
import { deleteKey, listKeys, readKey, writeKey } from "../../access/key-store.ts";
import { tierLimiter } from "../../access/request-rate.ts";
import { ApiError, invalidRequest } from "../../errors/api-error.ts";
import type { AppEnv } from "../middleware/app-env.ts";
import { limitBody } from "../middleware/body-limit.ts";
import { jsonBody } from "../middleware/json-body.ts";

const MAX_KEY_BYTES = 64 * 1024;

/** A 400 naming the first bad field in `param` (missing: `missing_required_parameter`), all in `details`. */
function invalidKeyRequest(input: unknown, error: z.ZodError): ApiError {
  const errors = inputErrors(input, error);
  const first = error.issues[0];
  const missing = first?.code === "invalid_type" && errors[0]?.value === undefined;
  return new ApiError(
    400,
    "invalid_request_error",
    missing ? "missing_required_parameter" : "invalid_value",
    formatSettingsErrors(errors),
    { param: errors[0]?.field, details: errors },
  );
}

export const adminKeysRoutes = new Hono<AppEnv>()
  .post(
    "/",
    limitBody({ maxBytes: MAX_KEY_BYTES, what: "key request" }),
    jsonBody({ what: "key request", object: true }),
    async (c) => {
      const input = c.get("json");
      const parsed = newKeyInput.safeParse(input);
      if (!parsed.success) throw invalidKeyRequest(input, parsed.error);
      const tier = parsed.data.limits.requestsPerMinute;
      if (tier !== null && !tierLimiter(c.env, tier)) {
        throw invalidRequest(
          "invalid_value",
          `limits.requestsPerMinute: ${tier} has no rate-limiting binding ${tierBinding(tier)} on this Worker (wrangler.toml)`,
          "limits.requestsPerMinute",
        );
      }
      const now = Date.now();
      const { id, key, hash } = await newClientKey();
      const record: ClientKeyRecord = { ...parsed.data, id, hash, createdAt: now };
      await writeKey(c.env.SETTINGS, record);
      keyCache.created(record, now);
      // The key is in this answer only: no cache may keep it.
      return c.json({ ...publicKey(record), key }, 201, { "cache-control": "no-store" });
    },
  )
  .get("/", async (c) => c.json(await listKeys(c.env.SETTINGS, c.req.query("cursor"))))
  .delete("/:id", async (c) => {
    const id = c.req.param("id");
    if (!isKeyId(id)) {
      throw invalidRequest("invalid_value", `id: must be a key id (16 hex digits)`, "id");
    }
    // Deleted whether or not this location sees it: a key made elsewhere within the last
    // minute may not have reached this location's KV yet.
    const record = await readKey(c.env.SETTINGS, id);
    await deleteKey(c.env.SETTINGS, id);
    keyCache.revoked(id, Date.now());
    if (!record) {
      throw new ApiError(404, "not_found_error", "key_not_found", `no key has id '${id}'`, {
        param: "id",
      });
    }
    return c.json({ id, revoked: true });
  });
