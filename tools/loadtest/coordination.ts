/**
 * How the pool under load coordinates its routing decisions: the seam for comparing designs
 * side by side. Today there is one mode, `object`: the pool's Durable Object decides every
 * request (docs/architecture.md). A new mode (say, a pool sharded across objects) adds an entry
 * with the pool settings that select it, and `npm run loadtest -- --coordination NAME` runs it.
 */
import type { PoolSettingsInput } from "../../src/core/settings/settings-schema.ts";

export interface Coordination {
  describe: string;
  /** The pool's settings over one origin at `originUrl`. */
  pool(originUrl: string): PoolSettingsInput;
}

export const COORDINATIONS: Record<string, Coordination> = {
  object: {
    describe: "one Durable Object per pool decides every request",
    pool: (originUrl) => ({ origins: [{ id: "fast", url: originUrl }] }),
  },
};
