/**
 * Edge coordination's protocol at a pool rate no simulated fleet can serve (10,000 requests/s would
 * need about 11,000 simulated 8B origins on the conversation trace): the same edge front
 * (sim/edge/edge-front.ts: I replicas, S coordinators, the root, the topology's delays), driven
 * without engines. The workload's requests arrive in order at `rateRps`, each ends `holdMs` after
 * it was routed as a success with the cached
 * tokens its replica predicted and a notional time to first token (its uncached prefill work at
 * the pool's speed, no queueing), and every origin reports its load to the root once a second;
 * requests carry their canonical bytes, so the coordinators' speed and bytes-per-token learners
 * run (and their values ride the load vectors) as in production. What it measures is what the
 * rate changes: coordinator calls per request, peak calls per second per coordinator and at the
 * root, bytes per sync, the view's age. Routing quality needs engines: that is edge-pair.ts's job.
 *
 * The figures count a window of `seconds` after a warm-up of `holdMs` + 1 s, so requests both
 * start and end in it (route and end records, as in production). When the window needs more
 * requests than the workload holds, the workload is replayed again with fresh prompts (each pass
 * re-keys every chunk hash: the same sharing within a pass, nothing shared across passes), so a
 * high rate is not a trace's second pass hitting what its first one claimed. Before issue 23
 * (defect I) the window was the second half of 4 s with 5 s holds, so it held no end, and at
 * 30,000 requests/s the trace repeated five times: both understated the traffic.
 */

import { edgeFront } from "../../../sim/edge/edge-front.ts";
import { assignIsolates } from "../../../sim/edge/sessions.ts";
import { Topology } from "../../../sim/edge/topology.ts";
import { EventQueue } from "../../../sim/fleet/event-queue.ts";
import { hashesOf, type Workload } from "../../../sim/workload/workload.ts";
import { BYTES_PER_TOKEN, chainHash } from "../../../src/core/chunk-hash.ts";
import type { EngineEvent } from "../../../src/core/engine-events.ts";
import { policyOf } from "../../../src/core/policies/index.ts";
import { prefillWork } from "../../../src/core/prefill-work.ts";
import type { LearnedBytesPerToken } from "../../../src/core/router/bytes-per-token.ts";
import type { RouteDecision } from "../../../src/core/router/router-types.ts";
import { parsePool } from "../../../src/core/settings/parse-settings.ts";
import { type EdgeFigures, edgeFigures } from "./edge-figures.ts";
import type { EdgeSpec } from "./edge-pair.ts";

export interface RateSpec {
  rateRps: number;
  /** Simulated seconds the figures count, after the warm-up (`warmupMs`). */
  seconds: number;
  /** How long each request holds its origin (routed to ended), ms. */
  holdMs: number;
}

export interface RateFigures extends EdgeFigures {
  rateRps: number;
  requests: number;
  /** Times the workload was replayed (each pass with fresh prompts). */
  passes: number;
  /** Over the window, per request arriving in it: requests that ended, records the coordinators applied. */
  warmEndsPerRequest: number;
  warmRecordsPerRequest: number;
  /** Chunks in the first coordinator's index at the end (grows with every fresh pass). */
  coordinatorChunks: number;
  /** Busiest second of the busiest coordinator over the window. */
  warmPeakSyncsPerSecond: number;
  warmSyncsPerRequest: number;
  /** Calls per request over the window, syncs and root exchanges (webhooks not counted). */
  warmCallsPerRequest: number;
  /**
   * What the first coordinator learned: the pool's bytes per token and the samples behind each
   * origin's prefill speed (0 samples: still the prior), so a run shows the learners ran.
   */
  learned: { bytesPerToken: LearnedBytesPerToken; prefillSamples: number[] };
}

/** Each origin's reported KV capacity, an 8B model's order on one 80 GB GPU (caps its claims). */
const KV_TOKENS = 2_000_000;
/** The notional engine's fixed time per request before its first token, ms. */
const FIXED_MS = 20;

/** Warm-up before the measured window: every request started in the window can end in it. */
export function warmupMs(rate: RateSpec): number {
  return rate.holdMs + 1000;
}

/**
 * Request i's chunk hashes: prompt i mod the workload, re-keyed for pass floor(i / size) > 0
 * (chainHash of the pass and the hash, so equal hashes stay equal within a pass and no hash is
 * shared with another pass, but for 53-bit collisions).
 */
export function promptHashes(w: Workload, i: number): Float64Array {
  const hashes = hashesOf(w, i % w.size);
  const pass = Math.floor(i / w.size);
  return pass === 0 ? hashes : hashes.map((h) => chainHash(pass, h));
}

export function runRate(spec: EdgeSpec, rate: RateSpec, w: Workload, seed: number): RateFigures {
  const topology = new Topology(spec.topology);
  const warmMs = warmupMs(rate);
  const spanMs = warmMs + rate.seconds * 1000;
  const n = Math.max(1, Math.round((rate.rateRps * spanMs) / 1000));
  const origins = spec.bench.origins;
  const ids = Array.from({ length: origins }, (_, o) => `o${o}`);
  const pool = parsePool({
    origins: ids.map((id) => ({ id, url: `http://${id}.test` })),
    policy: policyOf(spec.policy),
    chunkBytes: w.chunkTokens * BYTES_PER_TOKEN,
    coordination: "edge",
    edge: spec.edge,
  });
  const isolateOfTrace = assignIsolates(w, topology, spec.stickiness, seed);
  const isolateOf = Int32Array.from({ length: n }, (_, i) => isolateOfTrace[i % w.size] as number);
  const run = edgeFront({ topology, isolateOf, outage: null, sampleEvery: spec.sampleEvery });
  const queue = new EventQueue();
  const gapMs = 1000 / rate.rateRps;
  const inWindow = (t: number) => t >= warmMs && t < spanMs;
  let warmEnds = 0;
  const outstanding = new Int32Array(origins);
  const indexOf = new Map(ids.map((id, o) => [id, o]));
  /** Request i (trace prompt i mod the workload) goes to the decision's origin for holdMs. */
  const place = (i: number, d: RouteDecision, t: number) => {
    const k = i % w.size;
    const promptTokens = w.promptTokens[k] as number;
    const o = indexOf.get(d.origin as string) as number;
    outstanding[o] = (outstanding[o] as number) + 1;
    const cachedTokens = d.matchedTokens;
    const work = prefillWork(cachedTokens, promptTokens, pool.prefillAttentionTokens);
    const ttftMs = Math.min(rate.holdMs, FIXED_MS + (1000 * work) / pool.prefillTokensPerSecond);
    queue.push(t + rate.holdMs, 0, -1, 0, (end: number) => {
      outstanding[o] = (outstanding[o] as number) - 1;
      if (inWindow(end)) warmEnds++;
      front.complete(i, { ok: true, promptTokens, cachedTokens, ttftMs }, end);
    });
  };
  const front = run.front({
    pool,
    model: w.model,
    seed,
    size: n,
    schedule: (t, fn) => queue.push(t, 0, -1, 0, fn),
    place: (i, d, t) => place(i, d, t),
  });
  const capacity: EngineEvent[] = [{ type: "capacity", kvCapacityTokens: KV_TOKENS }];
  for (const id of ids) front.ingest(id, capacity, 0);
  const report = (t: number) => {
    ids.forEach((id, o) => {
      const running = outstanding[o] as number;
      front.ingest(id, [{ type: "load", running, waiting: 0, kvUsage: 0.5 }], t);
    });
    if (t + 1000 < spanMs) queue.push(t + 1000, 0, -1, 0, report);
  };
  queue.push(1000, 0, -1, 0, report);
  let next = 0;
  let now = 0;
  while (next < n || queue.size > 0) {
    const arrival = next * gapMs;
    if (next < n && arrival <= queue.peekTime()) {
      const i = next++;
      now = arrival;
      const k = i % w.size;
      const hashes = promptHashes(w, i);
      const promptTokens = w.promptTokens[k] as number;
      const promptBytes = promptTokens * BYTES_PER_TOKEN;
      const d = front.route(i, { chunkHashes: hashes, promptTokens, promptBytes }, arrival);
      if (d) place(i, d, arrival);
      continue;
    }
    const event = queue.pop();
    if (!event) break;
    now = event.t;
    (event.payload as (t: number) => void)(event.t);
  }
  const stats = front.stats(now);
  const c = run.counters();
  const figures = edgeFigures(c, run.protocol(), n);
  // The window: whole seconds from the warm-up's end to the last arrival.
  const from = Math.ceil(warmMs / 1000);
  const to = Math.floor(spanMs / 1000);
  let warmSyncs = 0;
  let warmPeak = 0;
  for (const perSecond of c.callsPerSecond) {
    for (const [s, calls] of perSecond) {
      if (s < from || s >= to) continue;
      warmSyncs += calls;
      warmPeak = Math.max(warmPeak, calls);
    }
  }
  let warmRoot = 0;
  for (const [s, calls] of c.rootExchangesPerSecond) if (s >= from && s < to) warmRoot += calls;
  let warmRecords = 0;
  for (const [s, records] of c.recordsPerSecond) if (s >= from && s < to) warmRecords += records;
  const warmRequests = Math.max(1, rate.rateRps * (to - from));
  return {
    ...figures,
    rateRps: rate.rateRps,
    requests: n,
    passes: Math.ceil(n / w.size),
    warmEndsPerRequest: warmEnds / Math.max(1, (rate.rateRps * (spanMs - warmMs)) / 1000),
    warmRecordsPerRequest: warmRecords / warmRequests,
    coordinatorChunks: stats.index.chunks,
    warmPeakSyncsPerSecond: warmPeak,
    warmSyncsPerRequest: warmSyncs / warmRequests,
    warmCallsPerRequest: (warmSyncs + warmRoot) / warmRequests,
    learned: {
      bytesPerToken: stats.bytesPerToken,
      prefillSamples: stats.origins.map((o) => o.prefill.samples),
    },
  };
}
