/**
 * Which settings a call to a pool's Durable Object was made under. Every call that depends on
 * settings carries the caller's `PoolVersion`; the object answers `null` when it needs the
 * pool's settings first (fresh object, or newer settings), and the Worker then pushes them with
 * `applySettings` and calls again (objects/pool-stub.ts). So settings written with
 * `wrangler kv` reach every object without a redeploy, and the hot path never clones settings.
 */

export interface PoolVersion {
  /**
   * Write time (ms) of the settings document, from its KV metadata (the admin API sets it);
   * 0 when unknown (written with `wrangler kv` without `--metadata`).
   */
  readonly revision: number;
  /** Hash of the pool's parsed settings: equal fingerprints mean equal settings. */
  readonly fingerprint: string;
}

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
