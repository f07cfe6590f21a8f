/**
 * @module
 * A pool's state as operators see it (`/admin/state`, `/metrics`, the dashboard): the object's
 * router stats and metrics (an edge pool's: each coordinator's, the first that has state
 * standing for the pool on the dashboard, and this isolate's replica), as the pool's front
 * (coordination/front.ts) gives them, and this isolate's settings status and fallback router
 * (the isolate's, whatever the pool's mode now), and how many stored-response ids its object
 * holds. Origin URLs are shown without credentials or
 * query strings: those may hold keys. An object that does not answer within OBJECT_TIMEOUT_MS
 * is reported as such (`objectError`), never as an error of the whole page, so one stuck pool
 * cannot hide the others.
 */
import type { RouterStats } from "../../core/router/router-types.ts";
import { frontFor, type ReplicaState } from "../coordination/front.ts";
import { fallbackRouters } from "../coordination/object/fallback-routers.ts";
import { ApiError } from "../errors/api-error.ts";
import type { CoordinatorState } from "../objects/edge-rpc-types.ts";
import { type PoolRef, poolStub } from "../objects/pool-stub.ts";
import type { ObjectState } from "../objects/rpc-types.ts";
import { withDeadline } from "../objects/with-deadline.ts";
import type { PoolVersion } from "../settings/pool-version.ts";
import {
  currentSettings,
  type LoadedSettings,
  type SettingsStatus,
  settingsCache,
} from "../settings/settings-cache.ts";

export const OBJECT_TIMEOUT_MS = 5000;

export interface PoolState {
  model: string;
  settings: SettingsStatus & { version: PoolVersion };
  object: ObjectState | null;
  /** Why the object's state is missing (`DeadlineError`, ...), else null. */
  objectError: string | null;
  /** This isolate's fallback router, if it has routed for the pool. */
  fallback: RouterStats | null;
  /** Edge pools: every coordinator's state (by colo group; null: it has seen no sync yet). */
  coordinators?: (CoordinatorState | null)[];
  /** Edge pools: this isolate's replica, if it has routed for the pool. */
  replica?: ReplicaState | null;
  /**
   * Responses ids the pool remembers the origin of (stored-responses/): in the pool's object
   * in both modes (an edge pool's root object, not its coordinators); null when it did not
   * answer in time.
   */
  storedResponses: number | null;
}

/** scheme://host/path only: credentials and query strings may carry keys. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(invalid url)";
  }
}

function redactStats(stats: RouterStats): RouterStats {
  return { ...stats, origins: stats.origins.map((o) => ({ ...o, url: redactUrl(o.url) })) };
}

/** How many stored-response ids the pool's object holds; null if it did not answer. */
async function storedResponseCount(env: Env, ref: PoolRef): Promise<number | null> {
  const count = poolStub(env, ref).storedResponseCount(ref.pool.storedResponses);
  return withDeadline(count, OBJECT_TIMEOUT_MS).catch(() => null);
}

/** The state of `model`'s pool; null when settings have no such pool. */
export async function poolState(
  env: Env,
  settings: LoadedSettings,
  model: string,
): Promise<PoolState | null> {
  const pool = settings.pool(model);
  if (!pool) return null;
  const ref = { model, pool, version: settings.version(model) };
  const [{ object, objectError, edge }, storedResponses] = await Promise.all([
    frontFor(env, ref).state(OBJECT_TIMEOUT_MS),
    storedResponseCount(env, ref),
  ]);
  const fallback = fallbackRouters.stats(model, Date.now());
  return {
    model,
    settings: { ...settingsCache.status(), version: ref.version },
    object: object && { ...object, router: redactStats(object.router) },
    objectError,
    fallback: fallback && redactStats(fallback),
    storedResponses,
    ...(edge
      ? {
          coordinators: edge.coordinators.map((c) => c && { ...c, router: redactStats(c.router) }),
          replica: edge.replica,
        }
      : {}),
  };
}

/**
 * Every pool's state, in settings order, asked of the objects in parallel; none before the
 * first settings document (so a scrape or the dashboard works on a fresh deployment).
 */
export async function poolStates(env: Env): Promise<PoolState[]> {
  let settings: LoadedSettings;
  try {
    settings = await currentSettings(env);
  } catch (error) {
    if (error instanceof ApiError && error.code === "settings_missing") return [];
    throw error;
  }
  const states = await Promise.all(
    Object.keys(settings.settings.pools).map((model) => poolState(env, settings, model)),
  );
  return states.filter((s): s is PoolState => s !== null);
}
