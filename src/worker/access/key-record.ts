/**
 * @module
 * What the router knows of a client key: the admin API's input (`newKeyInput`, validated with
 * zod, every bad field named), the record KV holds (`ClientKeyRecord`: the key's SHA-256, never
 * the key) and the view operators see (`publicKey`: the record without its hash).
 */
import { z } from "zod";
import type { Priority } from "../../core/route-request.ts";
import { modelName } from "../../core/settings/model-name.ts";
import type { SettingsError } from "../../core/settings/parse-settings.ts";

/** A key that names this model may use every pool. */
export const ANY_MODEL = "*";

const PRIORITIES = ["interactive", "batch"] as const satisfies readonly Priority[];

/**
 * The request-rate tiers: each is a Workers rate-limiting binding `KEY_RPM_<n>` in wrangler.toml
 * (a binding's limit and period are fixed, so a key names one; request-rate.ts).
 */
export const RPM_TIERS = [5, 60, 600, 6000] as const;
export type RpmTier = (typeof RPM_TIERS)[number];

export const tierBinding = (tier: RpmTier): string => `KEY_RPM_${tier}`;

const TIERS_TEXT = `must be one of the tiers ${RPM_TIERS.join(", ")} (rate-limiting bindings in wrangler.toml)`;

const rpmTier = z
  .number()
  .refine((n): n is RpmTier => (RPM_TIERS as readonly number[]).includes(n), TIERS_TEXT)
  .transform((n) => n as RpmTier);

/** A key's limits; null (the default) is no limit. */
const limits = z.strictObject({
  requestsPerMinute: rpmTier.nullable().default(null),
  promptTokensPerMinute: z
    .number()
    .int("promptTokensPerMinute must be an integer")
    .min(1)
    .max(1e9)
    .nullable()
    .default(null),
});

/** `POST /admin/keys`'s body. */
export const newKeyInput = z.strictObject({
  name: z.string().trim().min(1).max(128),
  /** Storable as KV key markers (model-name.ts): checked before anything is written. */
  models: z.array(modelName).min(1).max(256),
  priority: z.enum(PRIORITIES).default("interactive"),
  limits: limits.default({ requestsPerMinute: null, promptTokensPerMinute: null }),
});
export type NewKeyInput = z.output<typeof newKeyInput>;

/** A key as KV holds it (key `client-key:<id>`). */
export const clientKeyRecord = newKeyInput.extend({
  id: z.string().regex(/^[0-9a-f]{16}$/),
  /** Hex SHA-256 of the key. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  /** When it was made, ms since the epoch. */
  createdAt: z.number().int(),
});
export type ClientKeyRecord = z.output<typeof clientKeyRecord>;

export type PublicKey = Omit<ClientKeyRecord, "hash">;

export function publicKey({ hash: _hash, ...rest }: ClientKeyRecord): PublicKey {
  return rest;
}

/** zod's issues as `{ field, value?, reason }`, the settings' error shape (`models[2]`). */
export function inputErrors(input: unknown, error: z.ZodError): SettingsError[] {
  return error.issues.flatMap((issue) => {
    const paths =
      issue.code === "unrecognized_keys" ? issue.keys.map((k) => [...issue.path, k]) : [issue.path];
    const reason = issue.code === "unrecognized_keys" ? "unknown field" : issue.message;
    return paths.map((path) => {
      const field = path.reduce<string>(
        (out, k) =>
          typeof k === "number" ? `${out}[${k}]` : out ? `${out}.${String(k)}` : String(k),
        "",
      );
      let value: unknown = input;
      for (const k of path) {
        value = typeof value === "object" && value !== null ? (value as never)[k] : undefined;
      }
      const text = value === undefined ? undefined : JSON.stringify(value)?.slice(0, 80);
      return text === undefined
        ? { field: field || "(body)", reason }
        : { field: field || "(body)", value: text, reason };
    });
  });
}
