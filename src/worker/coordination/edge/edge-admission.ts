/**
 * @module
 * Admission for an edge pool in this isolate (docs/architecture.md, "The Worker's edge path"):
 * the core's `Admission` over the isolate's replica (its `route` and `waitMs`, which reads the
 * coordinator's load vector plus this isolate's own records), as the pool's object holds one
 * over its router in object mode (objects/router-object.ts). A request is routed or shed
 * at once, or held until admission routes it (late binding, on the replica's view of that
 * moment) or sheds it, or its client leaves. What may free room (an end, a cancel, a reroute, a
 * sync answer, a held request's timer) calls `pump`.
 *
 * Answers are data, collected by the held request itself (`take`), not promises: workerd
 * refuses to resolve a promise one request awaits from another request's context, and the
 * request whose end frees room is another. Nor does it run timers: a Worker has none between
 * requests, so each held request wakes on its own (route-at-edge.ts).
 */
import { Admission, type AdmissionStats, type Settled } from "../../../core/admission/admission.ts";
import type { EdgeReplica } from "../../../core/edge/edge-replica.ts";
import type { RouteRequest } from "../../../core/route-request.ts";
import type { AdmissionSettings } from "../../../core/settings/admission-settings.ts";

export class EdgeAdmission {
  readonly #replica: EdgeReplica;
  readonly #admission: Admission;
  /** Held requests: undefined while they wait, then how admission settled them. */
  readonly #held = new Map<string, Settled | undefined>();

  constructor(replica: EdgeReplica, settings: AdmissionSettings | undefined) {
    this.#replica = replica;
    this.#admission = new Admission(replica, settings, (id, s) => this.#settle(id, s));
  }

  /** The pool has `admission` settings. */
  get enabled(): boolean {
    return this.#admission.settings !== undefined;
  }

  /** Requests waiting now. */
  get waiting(): number {
    return this.#admission.waiting;
  }

  /** A request `id` (unique among those held): settled now, or null while it waits (`take`). */
  offer(id: string, request: RouteRequest, now: number): Settled | null {
    if (this.#held.has(id)) throw new Error(`request ${id} is already waiting`);
    const offered = this.#admission.offer(id, request, now);
    if (offered.kind !== "queued") return offered;
    this.#held.set(id, undefined);
    return null;
  }

  /** How held request `id` was settled, once (undefined while it waits or if unknown). */
  take(id: string): Settled | undefined {
    const settled = this.#held.get(id);
    if (settled) this.#held.delete(id);
    return settled;
  }

  /**
   * A held request's client left: its place is free, and if admission routed it before it could
   * look (another request's end pumped), that lease goes back to the replica. False if it was
   * not waiting.
   */
  leave(id: string, now: number): boolean {
    const settled = this.#held.get(id);
    this.#held.delete(id);
    if (settled?.kind === "routed" && settled.decision.ticket !== null) {
      this.#replica.cancel(settled.decision.ticket, now);
    }
    return this.#admission.leave(id);
  }

  /** Something may have freed room (or a held request's time is up): admit what fits. */
  pump(now: number): void {
    if (this.#admission.waiting > 0) this.#admission.pump(now);
  }

  /** New settings; without any, every held request is routed now. */
  configure(settings: AdmissionSettings | undefined, now: number): void {
    this.#admission.configure(settings, now);
  }

  /** When `pump` should next run if nothing else happens; null while nobody waits. */
  wakeAt(now: number): number | null {
    return this.#admission.wakeAt(now);
  }

  stats(now: number): AdmissionStats {
    return this.#admission.stats(now);
  }

  /** Every request admission settles later was held (`offer` held it before it could). */
  #settle(id: string, settled: Settled): void {
    if (this.#held.has(id)) this.#held.set(id, settled);
  }
}
