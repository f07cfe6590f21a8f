/** The Hono environment of the Worker: its bindings (from wrangler.toml) and context variables. */
import type { RequestIdVariables } from "hono/request-id";
import type { ClientKeyRecord } from "../../access/key-record.ts";
import type { RequestRecord } from "../../request-record/request-record.ts";

/**
 * Secrets the Worker reads but does not require, so `wrangler types` (which types only
 * `[secrets] required`) leaves them out. Not required: deploys without them still succeed.
 */
interface OptionalSecrets {
  /** Bearer token for `GET /metrics` alone, so a scraper need not hold ADMIN_TOKEN. */
  METRICS_TOKEN?: string;
}

declare global {
  interface Env extends OptionalSecrets {}
  namespace Cloudflare {
    interface Env extends OptionalSecrets {}
  }
}

export interface AppEnv {
  Bindings: Env;
  Variables: RequestIdVariables & {
    /** The LLM routes' record of the request (see request-log.ts). */
    record: RequestRecord;
    /** The request's client key (client-key.ts); null while keys are not enforced. */
    client: ClientKeyRecord | null;
  };
}
