/**
 * @module
 * The coordination seam (docs/architecture.md, "Two request journeys"): which mode serves a
 * pool, chosen in one place. Every route that does something mode-specific (completions,
 * engine events, settings pushes, `/admin/state`) asks `frontFor` and calls the `PoolFront` it
 * gets; nothing else in the Worker tests the mode. The switch is exhaustive: a mode added to
 * the settings schema without a front here does not compile. The modes (`object/`, `edge/`)
 * never import each other; what both build is in `shared/`.
 */
import type { PoolRef } from "../objects/pool-stub.ts";
import { edgeFront } from "./edge/edge-front.ts";
import { objectFront } from "./object/object-front.ts";
import type { PoolFront } from "./shared/pool-front.ts";

export type {
  CoordinationState,
  PoolFront,
  ReplicaState,
  RouteOptions,
} from "./shared/pool-front.ts";

/** The front of `ref`'s pool, for its coordination mode. */
export function frontFor(env: Env, ref: PoolRef): PoolFront {
  const mode = ref.pool.coordination;
  switch (mode) {
    case "object":
      return objectFront(env, ref);
    case "edge":
      return edgeFront(env, ref);
    default:
      return unknownMode(mode);
  }
}

function unknownMode(mode: never): never {
  throw new Error(`no coordination front for mode ${String(mode)}`);
}
