/**
 * Names a settings document may not give to what it names, because something else already
 * answers to them:
 * - The Worker's own bindings (wrangler.toml, src/worker/http/middleware/app-env.ts) as an origin's
 *   `apiKeySecret`: the origin would be sent `Bearer <ADMIN_TOKEN>`. Keep this list in step with
 *   the bindings; a worker test checks it against the Worker's env.
 * - Object.prototype's property names as model names or origin ids: an object keyed by such a
 *   name reads the prototype when the entry is missing, and `__proto__` is not even an entry:
 *   assigning it sets the prototype, which is how a pool named `__proto__` vanished. Secret
 *   names cannot collide (they are UPPER_SNAKE_CASE; every prototype key has a lower-case
 *   letter).
 */

export const ROUTER_BINDINGS: readonly string[] = [
  "ADMIN_TOKEN",
  "WEBHOOK_SECRET",
  "METRICS_TOKEN",
  "SETTINGS_CACHE_MS",
  "SETTINGS",
  "ROUTER",
  "COORDINATOR",
  "EDGE_ROOT",
  "KEY_RPM_5",
  "KEY_RPM_60",
  "KEY_RPM_600",
  "KEY_RPM_6000",
];

export const ROUTER_BINDING_REASON =
  "is the router's own binding, not an origin key: give the origin a secret of its own";

/** `constructor`, `toString`, `__proto__`, ... as the running engine defines them, and `prototype`. */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set([
  ...Object.getOwnPropertyNames(Object.prototype),
  "prototype",
]);

export const PROTOTYPE_KEY_REASON = "is reserved (a property name of every JavaScript object)";
