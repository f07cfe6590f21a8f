/**
 * Where the simulated edge's pieces sit and how far apart they are.
 *
 * - Colos: C points evenly spaced on a ring (a crude globe: neighbours are near, the opposite
 *   point is antipodal). The round trip between two colos is `near + far * d`, d in [0, 1] the
 *   ring distance over half the ring: 2 ms within a colo, 152 ms to the antipode by default
 *   (Smart Placement's own figures: 1-3 ms near, 20-30 ms per query from afar, more across
 *   oceans). A message takes half the round trip.
 * - Isolates: I of them, isolate k in colo k mod C (each colo gets I / C; with fewer isolates
 *   than colos, a colo without its own uses isolate c mod I, far from it or not).
 * - Coordinators: S groups of contiguous colos (colo c in group floor(c x S / C)), each
 *   coordinator in its group's middle colo; the root, and object mode's one object, in the
 *   middle colo of all (near the GPUs, wherever users are).
 */
export interface TopologyOptions {
  isolates: number;
  colos: number;
  coordinators: number;
  /** Round trip within a colo, ms. */
  rttNearMs: number;
  /** Added round trip to the antipodal colo, ms. */
  rttFarMs: number;
}

export class Topology {
  readonly options: TopologyOptions;
  /** Per isolate, its colo. */
  readonly coloOf: Int32Array;
  /** Per colo, its isolates. */
  readonly isolatesIn: number[][];
  /** Per colo, its coordinator group. */
  readonly groupOf: Int32Array;
  /** Per coordinator group, the colo it sits in. */
  readonly coordinatorColo: number[];
  /** Where the root sits, and object mode's object. */
  readonly rootColo: number;
  readonly groups: number;

  constructor(options: TopologyOptions) {
    const { isolates, colos } = options;
    if (!(isolates >= 1 && colos >= 1 && options.coordinators >= 1)) {
      throw new RangeError(`topology needs at least one isolate, colo and coordinator`);
    }
    this.options = options;
    this.rootColo = Math.floor(colos / 2);
    this.groups = Math.min(options.coordinators, colos);
    this.coloOf = Int32Array.from({ length: isolates }, (_, k) => k % colos);
    this.isolatesIn = Array.from({ length: colos }, (_, c) => {
      const own: number[] = [];
      for (let k = c; k < isolates; k += colos) own.push(k);
      return own.length > 0 ? own : [c % isolates];
    });
    this.groupOf = Int32Array.from({ length: colos }, (_, c) =>
      Math.floor((c * this.groups) / colos),
    );
    this.coordinatorColo = Array.from({ length: this.groups }, (_, g) => {
      const members: number[] = [];
      for (let c = 0; c < colos; c++) if (this.groupOf[c] === g) members.push(c);
      return members[Math.floor(members.length / 2)] as number;
    });
  }

  /** Round trip between two colos, ms. */
  rttMs(a: number, b: number): number {
    const { colos, rttNearMs, rttFarMs } = this.options;
    const apart = Math.abs(a - b);
    const d = colos > 1 ? Math.min(apart, colos - apart) / (colos / 2) : 0;
    return rttNearMs + rttFarMs * d;
  }

  /** The coordinator group of isolate `k`. */
  groupOfIsolate(k: number): number {
    return this.groupOf[this.coloOf[k] as number] as number;
  }
}
