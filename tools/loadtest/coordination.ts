/**
 * How the pool under load coordinates its routing decisions: the seam for comparing designs
 * side by side (docs/architecture.md, "Scale: two coordination modes"). Each mode is a pool of
 * its own in the same `wrangler dev`, so `npm run loadtest -- --coordination object,edge`
 * measures both back to back against the same origin and the same floor.
 */
import type { PoolSettingsInput } from "../../src/core/settings/settings-schema.ts";

/** One mode as the load test runs it: what it is, and its pool over the test's origin. */
export interface LoadtestPool {
  describe: string;
  /** The pool's settings over one origin at `originUrl`, open to the load's keyless clients. */
  pool(originUrl: string): PoolSettingsInput;
}

export const COORDINATIONS: Record<string, LoadtestPool> = {
  object: {
    describe: "one Durable Object per pool decides every request (two calls per request)",
    pool: (originUrl) => ({ origins: [{ id: "fast", url: originUrl }], access: "open" }),
  },
  edge: {
    describe: "each isolate decides with its replica, batched syncs with one coordinator",
    pool: (originUrl) => ({
      origins: [{ id: "fast", url: originUrl }],
      access: "open",
      coordination: "edge",
    }),
  },
};
