/**
 * @module
 * Client keys in Workers KV, in the SETTINGS namespace beside the settings document (one
 * namespace to create and bind; keys are hashes, so sharing it exposes nothing usable):
 * - `client-key:<id>`: one record per key (key-record.ts), so two admins creating or revoking
 *   different keys at once never overwrite each other (KV has no compare-and-swap);
 * - `client-keys:enforced:<model>`: one marker per model a key names (`*` for a key that names
 *   every pool), written with the key and never removed by the API. From then on every request
 *   for that pool (for `*`: every pool) needs a key, even after every such key is revoked:
 *   revoking the last key must not open the pool to everyone. One marker per model, like one
 *   record per key, so concurrent creations cannot drop each other's enforcement.
 *
 * KV is eventually consistent: a write is seen at once where it was made and within about 60 s
 * elsewhere, and a read's result is cached for 60 s at the location that made it (KV's default
 * `cacheTtl`), a missing key included. docs/api.md, "Client keys", says what follows for
 * creation and revocation.
 */
import { ENFORCED_MARKER_PREFIX } from "../../core/settings/model-name.ts";
import { type ClientKeyRecord, clientKeyRecord, type PublicKey, publicKey } from "./key-record.ts";

const RECORD_PREFIX = "client-key:";

/** Keys per `GET /admin/keys` page: each costs one KV read. */
export const PAGE_SIZE = 100;

/** The record of key `id`; null when KV has none or holds one that does not parse (logged). */
export async function readKey(kv: KVNamespace, id: string): Promise<ClientKeyRecord | null> {
  const value = await kv.get(RECORD_PREFIX + id, "json");
  if (value === null) return null;
  const parsed = clientKeyRecord.safeParse(value);
  if (!parsed.success) console.error(`client key ${id}: KV record is invalid; refusing the key`);
  return parsed.success ? parsed.data : null;
}

/**
 * Store a new key's record, then enforce keys on the pools it names (so the key exists before
 * it is needed). A marker already there is not written again: KV refuses a second write to one
 * name within a second, which keys made in a row for one pool would hit. At most 2 + 2 x 256 of
 * KV's 1,000 operations per invocation. Model names are storable by then (model-name.ts); if a
 * marker write fails anyway the record is deleted again, as the admin is never shown its key:
 * no orphan record (markers already written stay, as every marker does).
 */
export async function writeKey(kv: KVNamespace, record: ClientKeyRecord): Promise<void> {
  await kv.put(RECORD_PREFIX + record.id, JSON.stringify(record));
  try {
    await Promise.all(
      record.models.map(async (model) => {
        if (!(await readEnforced(kv, model))) {
          await kv.put(ENFORCED_MARKER_PREFIX + model, String(record.createdAt));
        }
      }),
    );
  } catch (error) {
    await deleteKey(kv, record.id).catch((e) => console.error(`client key ${record.id}:`, e));
    throw error;
  }
}

export async function deleteKey(kv: KVNamespace, id: string): Promise<void> {
  await kv.delete(RECORD_PREFIX + id);
}

/** Whether a key ever named `model` (`*`: every pool). */
export async function readEnforced(kv: KVNamespace, model: string): Promise<boolean> {
  return (await kv.get(ENFORCED_MARKER_PREFIX + model)) !== null;
}

export interface KeyPage {
  keys: PublicKey[];
  /** Pass as `?cursor=` for the next page; null on the last. */
  cursor: string | null;
}

/** A page of keys, without their hashes, in id order. */
export async function listKeys(kv: KVNamespace, cursor?: string): Promise<KeyPage> {
  const page = await kv.list({ prefix: RECORD_PREFIX, limit: PAGE_SIZE, cursor });
  const records = await Promise.all(
    page.keys.map((k) => readKey(kv, k.name.slice(RECORD_PREFIX.length))),
  );
  return {
    keys: records.filter((r) => r !== null).map(publicKey),
    cursor: page.list_complete ? null : page.cursor,
  };
}
