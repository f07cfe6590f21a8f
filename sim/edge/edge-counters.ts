/**
 * What the edge front counts while a replay runs (edge-front.ts and its parts): calls per
 * coordinator and the root per simulated second, the object requests a bill counts
 * (edge-billing.ts), the isolates' warm seconds, bytes of every `sampleEvery`-th sync as Workers
 * RPC would send them (V8's wire format, counted from the value so a seed replays to the byte:
 * wire-size.ts), the view's age at each decision and the replicas' memory. The protocol's own
 * counters stay in the core's objects (`EdgeRun.protocol`).
 */

/** Everything the edge front counts while the replay runs. */
export class EdgeCounters {
  syncs = 0;
  failedSyncs = 0;
  rootExchanges = 0;
  webhooks = 0;
  /**
   * Per coordinator group, billed requests it received per whole second of simulated time:
   * syncs, connects, messages up sockets at MESSAGE_BILLING.
   */
  readonly callsPerSecond: Map<number, number>[];
  /** Records the coordinators applied per whole second (duplicate batches not counted). */
  readonly recordsPerSecond = new Map<number, number>();
  /** The root's calls per second: exchanges with coordinators and webhooks; exchanges alone. */
  readonly rootCallsPerSecond = new Map<number, number>();
  readonly rootExchangesPerSecond = new Map<number, number>();
  /** Sampled sync sizes in bytes: the request (batch) and the answer (delta or bootstrap). */
  readonly requestBytes: number[] = [];
  readonly answerBytes: number[] = [];
  readonly bootstrapBytes: number[] = [];
  /** Per request, the replica's view age when it decided (ms); NaN when it had no view yet. */
  readonly viewAgeMs: Float64Array;
  /** Decisions made while the replica's last sync had failed. */
  degradedDecisions = 0;
  /** Requests that waited for their replica's sync before being routed (cold or idle view). */
  waitedDecisions = 0;
  /** Requests whose start waited for their announcement (a long prefill: announce.ts). */
  announcedDecisions = 0;
  /** Push: sockets opened (connects), batches sent up sockets (incoming messages), frames. */
  connects = 0;
  uploads = 0;
  framesBuilt = 0;
  framesDelivered = 0;
  /** Syncs that reached a coordinator (a failed one reached nothing). */
  answeredSyncs = 0;
  /** Isolate-seconds warm (within `warmMs` after a request): an isolate's loop runs then. */
  warmSeconds = 0;
  /** Largest replica index (bytes, chunks) and queue seen at any sample. */
  replicaIndexBytes = 0;
  replicaIndexChunks = 0;
  replicaWaiting = 0;

  constructor(groups: number, requests: number) {
    this.callsPerSecond = Array.from({ length: groups }, () => new Map());
    this.viewAgeMs = new Float64Array(requests).fill(Number.NaN);
  }
}

/** Calls in the busiest second of a per-second count. */
export function peak(perSecond: Map<number, number>): number {
  let max = 0;
  for (const n of perSecond.values()) max = Math.max(max, n);
  return max;
}

/** Adds `by` to the whole second of simulated time `t` falls in. */
export function bump(perSecond: Map<number, number>, t: number, by = 1): void {
  const s = Math.floor(t / 1000);
  perSecond.set(s, (perSecond.get(s) ?? 0) + by);
}
