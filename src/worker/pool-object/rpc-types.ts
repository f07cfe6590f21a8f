/**
 * The Durable Object's RPC contract beyond the core's own types: which settings a call was made
 * under. Every call that depends on settings carries the caller's `PoolVersion`; the object
 * answers `null` when it needs the pool's settings first (fresh object, or newer settings), and
 * the Worker then pushes them with `applySettings` and calls again. So settings written with
 * `wrangler kv` reach every object without a redeploy, and the hot path never clones settings.
 */
import type { RouteRequest } from "../../core/router/router-types.ts";

export interface PoolVersion {
  /**
   * Write time (ms) of the settings document, from its KV metadata (the admin API sets it);
   * 0 when unknown (written with `wrangler kv` without `--metadata`).
   */
  readonly revision: number;
  /** Hash of the pool's parsed settings: equal fingerprints mean equal settings. */
  readonly fingerprint: string;
}

export interface RouteCall extends RouteRequest {
  readonly version: PoolVersion;
}

/**
 * What the object did with a webhook batch: applied it; had applied it before (`duplicate`);
 * refused it as made before the origin's last applied batch or outside the window (`stale`);
 * or does not list the origin in its settings.
 */
export type IngestOutcome = "applied" | "duplicate" | "stale" | "unknown-origin";

/**
 * Whether an object holding `held` must take the caller's settings first. A caller with older
 * settings (lower revision) is served with the object's newer ones, so an isolate that has not
 * yet seen a new document cannot roll the object back. Without a revision the differing
 * settings win, as the last written: while KV propagates such a change (up to a minute) an
 * object may switch between the two versions, which keeps the state of origins in both.
 */
export function needsSettings(held: PoolVersion | null, caller: PoolVersion): boolean {
  if (held === null) return true;
  if (held.fingerprint === caller.fingerprint) return false;
  return caller.revision === 0 || caller.revision >= held.revision;
}
