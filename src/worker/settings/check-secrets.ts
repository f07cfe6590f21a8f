/**
 * The one check of a settings document the schema cannot make: every `apiKeySecret` must name a
 * secret this Worker has, or requests to that origin would fail. Errors use the schema's error
 * shape so the admin API lists them together with the schema's.
 */
import type { SettingsError } from "../../core/settings/parse-settings.ts";
import type { Settings } from "../../core/settings/settings-schema.ts";

export function missingSecrets(settings: Settings, env: Env): SettingsError[] {
  const bindings = env as unknown as Record<string, unknown>;
  const errors: SettingsError[] = [];
  for (const [model, pool] of Object.entries(settings.pools)) {
    pool.origins.forEach((origin, i) => {
      const name = origin.apiKeySecret;
      if (name === undefined || typeof bindings[name] === "string") return;
      errors.push({
        field: `pools[${JSON.stringify(model)}].origins[${i}].apiKeySecret`,
        value: JSON.stringify(name),
        reason: "names a secret that is not set on this Worker",
      });
    });
  }
  return errors;
}
