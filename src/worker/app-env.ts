/** The Hono environment of the Worker: its bindings (from wrangler.toml) and context variables. */
import type { RequestIdVariables } from "hono/request-id";

export interface AppEnv {
  Bindings: Env;
  Variables: RequestIdVariables;
}
