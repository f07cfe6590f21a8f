/**
 * @module
 * A pool's state as operators see it (`/admin/state`, `/metrics`, the dashboard): the object's
 * router stats and metrics (an edge pool's: each coordinator's, the first that has state standing
 * for the pool on the dashboard, and this isolate's replica), this isolate's settings status and fallback router. Origin URLs are
 * shown without credentials or query strings: those may hold keys. An object that does not
 * answer within OBJECT_TIMEOUT_MS is reported as such (`objectError`), never as an error of the
 * whole page, so one stuck pool cannot hide the others.
 */
import type { AdmissionStats } from "../../core/admission/admission.ts";
import type { ReplicaCounters } from "../../core/edge/replica-sync.ts";
import type { RouterStats } from "../../core/router/router-types.ts";
import { coordinatorStub } from "../coordinator-object/edge-stubs.ts";
import type { CoordinatorState } from "../coordinator-object/rpc-types.ts";
import { replicaRegistry } from "../edge-mode/replica-registry.ts";
import { fallbackRouters } from "../edge-routing/fallback-routers.ts";
import { poolStub } from "../edge-routing/pool-stub.ts";
import { withDeadline } from "../edge-routing/with-deadline.ts";
import { ApiError } from "../errors/api-error.ts";
import type { ObjectState } from "../pool-object/rpc-types.ts";
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
}

export interface ReplicaState {
  isolate: string;
  group: number;
  degraded: boolean;
  viewAgeMs: number | null;
  waiting: { records: number; dropped: number };
  counters: ReplicaCounters;
  /** This isolate's admission for the pool: waiting, admitted, shed, left. */
  admission: AdmissionStats;
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

/** The state of `model`'s pool; null when settings have no such pool. */
export async function poolState(
  env: Env,
  settings: LoadedSettings,
  model: string,
): Promise<PoolState | null> {
  const pool = settings.pool(model);
  if (!pool) return null;
  const ref = { model, pool, version: settings.version(model) };
  let object: ObjectState | null = null;
  let objectError: string | null = null;
  const edge = pool.coordination === "edge";
  let coordinators: (CoordinatorState | null)[] = [];
  try {
    if (edge) {
      const groups = Array.from({ length: pool.edge.coordinators }, (_, g) => g);
      coordinators = await withDeadline(
        Promise.all(
          groups.map(async (g) => {
            const state = await coordinatorStub(env, model, pool, g).state();
            return state && { ...state, router: redactStats(state.router) };
          }),
        ),
        OBJECT_TIMEOUT_MS,
      );
      object = coordinators.find((c) => c !== null) ?? null;
    } else {
      const state = (await withDeadline(
        poolStub(env, ref).state(),
        OBJECT_TIMEOUT_MS,
      )) as ObjectState | null;
      object = state && { ...state, router: redactStats(state.router) };
    }
  } catch (error) {
    objectError = error instanceof Error ? error.name : "error";
  }
  const fallback = fallbackRouters.stats(model, Date.now());
  return {
    model,
    settings: { ...settingsCache.status(), version: ref.version },
    object,
    objectError,
    fallback: fallback && redactStats(fallback),
    ...(edge ? { coordinators, replica: replicaState(model, Date.now()) } : {}),
  };
}

function replicaState(model: string, now: number): ReplicaState | null {
  const held = replicaRegistry.peek(model);
  if (!held) return null;
  const { replica } = held;
  return {
    isolate: replica.isolate,
    group: held.group,
    degraded: replica.degraded,
    viewAgeMs: replica.viewAgeMs(now),
    waiting: replica.waiting,
    counters: { ...replica.counters },
    admission: held.admission.stats(now),
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
