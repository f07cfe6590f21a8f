/**
 * The Worker's own routers, for when the pool's Durable Object cannot answer in time
 * (docs/architecture.md, "One request", step 4): per pool, a `CoreRouter` held in this isolate
 * with the pool's settings but the `prefix-hash` policy, so a prefix keeps landing on the same
 * origin from every isolate without shared state, and the load and circuits this isolate sees
 * still steer it. It is the same core code the object runs, on the settings `fallbackPool`
 * derives; nothing here decides anything.
 */

import { CoreRouter } from "../../../core/router/core-router.ts";
import { fallbackPool } from "../../../core/router/fallback-pool.ts";
import type { RouterStats } from "../../../core/router/router-types.ts";
import type { PoolSettings } from "../../../core/settings/settings-schema.ts";
import type { PoolVersion } from "../../settings/pool-version.ts";

interface Held {
  fingerprint: string;
  router: CoreRouter;
}

export class FallbackRouters {
  #held = new Map<string, Held>();
  #ticketPrefix: string | null = null;

  /** The pool's fallback router, brought up to `version`'s settings. */
  get(model: string, pool: PoolSettings, version: PoolVersion): CoreRouter {
    const settings = fallbackPool(pool);
    const held = this.#held.get(model);
    if (held) {
      if (held.fingerprint !== version.fingerprint) {
        held.router.applySettings(settings);
        held.fingerprint = version.fingerprint;
      }
      return held.router;
    }
    // Random values are not available at module load in Workers, so the prefix is made here.
    this.#ticketPrefix ??= `fb-${crypto.randomUUID().slice(0, 8)}-`;
    const router = new CoreRouter(settings, { model, ticketPrefix: this.#ticketPrefix });
    this.#held.set(model, { fingerprint: version.fingerprint, router });
    return router;
  }

  stats(model: string, now: number): RouterStats | null {
    return this.#held.get(model)?.router.stats(now) ?? null;
  }
}

/** One set per isolate. */
export const fallbackRouters = new FallbackRouters();
