/**
 * Validation of a settings document with errors a person can act on: each names the field (as a
 * path), the value found there and why it is wrong. All errors are reported at once, and a
 * document with any error is rejected whole, so settings are never half-applied.
 */
import type { z } from "zod";
import { PROTOTYPE_KEY_REASON } from "./reserved-names.ts";
import {
  type PoolSettings,
  type PoolSettingsInput,
  poolSettings,
  type Settings,
  settingsSchema,
} from "./settings-schema.ts";

export interface SettingsError {
  /** e.g. `pools.llama.origins[1].url` */
  field: string;
  /** The offending value, as short JSON (absent when the field is missing). */
  value?: string;
  reason: string;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; errors: SettingsError[] };

/** `pools.llama.origins[0].url`; keys that are not identifiers in brackets: `pools["a/b"]`. */
function fieldName(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(String(key)))
      out += `[${JSON.stringify(String(key))}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out || "(document)";
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const key of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

function shortJson(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function errorOf(input: unknown, path: readonly PropertyKey[], reason: string): SettingsError {
  const value = shortJson(valueAt(input, path));
  return value === undefined
    ? { field: fieldName(path), reason }
    : { field: fieldName(path), value, reason };
}

function errorsOf(input: unknown, error: z.ZodError): SettingsError[] {
  return error.issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => errorOf(input, [...issue.path, key], "unknown field"));
    }
    // A record's key: say why the key is wrong, not only that it is.
    const reason =
      issue.code === "invalid_key" ? issue.issues.map((i) => i.message).join("; ") : issue.message;
    return [errorOf(input, issue.path, reason)];
  });
}

/**
 * zod's records skip an own `__proto__` key (JSON.parse makes one) without a word, so a pool of
 * that name would vanish from a document reported valid; strict objects report it themselves.
 */
function droppedProtoKeys(input: unknown): SettingsError[] {
  const pools = (input as { pools?: unknown } | null)?.pools;
  if (typeof pools !== "object" || pools === null || !Object.hasOwn(pools, "__proto__")) return [];
  return [errorOf(input, ["pools", "__proto__"], PROTOTYPE_KEY_REASON)];
}

export function parseSettings(input: unknown): ParseResult<Settings> {
  const result = settingsSchema.safeParse(input);
  const errors = [
    ...droppedProtoKeys(input),
    ...(result.success ? [] : errorsOf(input, result.error)),
  ];
  return result.success && errors.length === 0
    ? { ok: true, value: result.data }
    : { ok: false, errors };
}

/** One pool's settings with defaults applied (tests and the simulator build pools directly). */
export function parsePool(input: PoolSettingsInput): PoolSettings {
  const result = poolSettings.safeParse(input);
  if (result.success) return result.data;
  const detail = errorsOf(input, result.error).map((e) => `${e.field}: ${e.reason}`);
  throw new Error(`invalid pool settings: ${detail.join("; ")}`);
}

export function formatSettingsErrors(errors: readonly SettingsError[]): string {
  return errors
    .map((e) =>
      e.value === undefined ? `${e.field}: ${e.reason}` : `${e.field}: ${e.value} ${e.reason}`,
    )
    .join("; ");
}
