/**
 * One policy replayed over one workload on a simulated fleet: the same `CoreRouter` the Durable
 * Object holds, driven exactly as production drives it, and one `Engine` per origin.
 *
 * - arrival: `route(request, now)`; the request joins its origin's engine (cutting a decode span
 *   so the engine's next iteration sees it);
 * - the response ends: `complete(ticket, { ok, ttfbMs, promptTokens, cachedTokens }, now)` with
 *   the engine's own cached-token count, as vLLM reports `prompt_tokens_details.cached_tokens`;
 * - webhooks: at start each origin reports its KV capacity; every `reportIntervalMs` each engine
 *   snapshots running, waiting and KV usage, which reaches `ingest` `reportDelayMs` later.
 * Network time is zero: TTFT is queueing plus prefill, which is what routing changes.
 * Same-time events run arrivals, then engine iterations, then report deliveries, then report
 * snapshots, each in insertion order, so a seed replays a run exactly.
 */

import { Engine, type EngineRequest, engineRequest } from "../../../sim/engine/engine.ts";
import type { EngineProfile } from "../../../sim/engine/profiles.ts";
import { BYTES_PER_TOKEN } from "../../../src/core/chunk-hash.ts";
import type { EngineEvent } from "../../../src/core/engine-events.ts";
import type { PolicySettings } from "../../../src/core/policies/index.ts";
import { CoreRouter } from "../../../src/core/router/core-router.ts";
import { fallbackPool } from "../../../src/core/router/fallback-pool.ts";
import { parsePool } from "../../../src/core/settings/parse-settings.ts";
import { hashesOf, type Workload } from "../workload/workload.ts";
import { EventQueue } from "./event-queue.ts";
import { QueueProbe } from "./queue-probe.ts";
import type { PolicyResult } from "./result-types.ts";
import { summarise } from "./summarise.ts";
import { Timeline } from "./timeline.ts";

export interface SimConfig {
  policy: PolicySettings;
  origins: number;
  profile: EngineProfile;
  seed: number;
  reportIntervalMs: number;
  reportDelayMs: number;
}

const ENGINE = 1;
const DELIVERY = 2;
const SNAPSHOT = 3;

export function simulatePolicy(
  w: Workload,
  config: SimConfig,
  onProgress: (completed: number) => void = () => {},
): PolicyResult {
  const { profile, origins } = config;
  const ids = Array.from({ length: origins }, (_, i) => `gpu-${i}`);
  const indexOf = new Map(ids.map((id, i) => [id, i]));
  const pool = parsePool({
    origins: ids.map((id) => ({
      id,
      url: `http://${id}.sim`,
      kvCapacityTokens: profile.kvCapacityTokens,
      prefillTokensPerSecond: profile.prefillTokensPerSecond,
    })),
    policy: config.policy,
    chunkBytes: w.chunkTokens * BYTES_PER_TOKEN,
  });
  const router = new CoreRouter(pool, { model: w.model, seed: config.seed });
  const fallback = new CoreRouter(fallbackPool(pool), { model: w.model, seed: config.seed });
  const engines = ids.map(() => new Engine(profile, w.chunkTokens));
  const versions = new Int32Array(origins);
  const due = new Float64Array(origins).fill(Number.NaN);
  const queue = new EventQueue();
  const span = w.size > 0 ? (w.arrivalMs[w.size - 1] as number) : 0;
  const timeline = new Timeline(origins, Math.max(config.reportIntervalMs, span / 100));
  const probe = new QueueProbe();

  const requests: EngineRequest[] = new Array(w.size);
  const tickets: (string | null)[] = new Array(w.size).fill(null);
  /** Which router issued each request's ticket: the pool's, or the fallback. */
  const routedBy: CoreRouter[] = new Array(w.size);
  const routedTo = new Int32Array(w.size);
  const prefilled = new Float64Array(origins);
  let overflows = 0;
  let fallbacks = 0;
  let expired = 0;
  let completed = 0;

  for (const id of ids) {
    router.ingest(id, [{ type: "capacity", kvCapacityTokens: profile.kvCapacityTokens }], 0);
  }
  if (w.size > 0) queue.push(config.reportIntervalMs, SNAPSHOT, -1);

  const wake = (o: number, t: number) => {
    due[o] = t;
    versions[o] = (versions[o] as number) + 1;
    queue.push(t, ENGINE, o, versions[o]);
  };

  const arrive = (i: number, t: number) => {
    const hashes = hashesOf(w, i);
    const promptTokens = w.promptTokens[i] as number;
    let decision = router.route({ chunkHashes: hashes, promptTokens }, t);
    routedBy[i] = router;
    if (decision.origin === null) {
      // As the Worker does when the object cannot place a request: route alone.
      fallbacks++;
      decision = fallback.route({ chunkHashes: hashes, promptTokens }, t);
      routedBy[i] = fallback;
    }
    const o = indexOf.get(decision.origin as string) as number;
    tickets[i] = decision.ticket;
    routedTo[i] = o;
    // Engine truth at arrival: did another origin hold a longer prefix than the chosen one?
    const limit = Math.floor((promptTokens - 1) / w.chunkTokens);
    const chosen = (engines[o] as Engine).cache.lookup(hashes, limit);
    if (engines.some((e) => e.cache.lookup(hashes, limit) > chosen)) overflows++;
    const r = engineRequest(i, hashes, promptTokens, w.outputTokens[i] as number, t);
    requests[i] = r;
    const engine = engines[o] as Engine;
    engine.enqueue(r);
    if (engine.busy) {
      const end = engine.interrupt(t);
      if (end !== due[o]) wake(o, end);
    } else if (Number.isNaN(due[o] as number)) {
      wake(o, t);
    }
  };

  const finish = (r: EngineRequest, t: number) => {
    const ticket = tickets[r.id];
    if (ticket !== null && ticket !== undefined) {
      const known = (routedBy[r.id] as CoreRouter).complete(
        ticket,
        {
          ok: true,
          ttfbMs: r.firstTokenMs - r.arrivalMs,
          promptTokens: r.promptTokens,
          cachedTokens: r.cachedTokens,
        },
        t,
      );
      if (!known) expired++;
    }
    if (++completed % 256 === 0) onProgress(completed);
  };

  const step = (o: number, t: number) => {
    const engine = engines[o] as Engine;
    due[o] = Number.NaN;
    if (engine.busy) {
      const result = engine.finish();
      prefilled[o] = (prefilled[o] as number) + result.prefilledTokens;
      for (const r of result.done) finish(r, t);
    }
    const end = engine.start(t);
    if (end !== null) wake(o, end);
  };

  const snapshot = (t: number) => {
    const views = router.stats(t).origins;
    engines.forEach((e, o) => {
      probe.sample(views[o]?.queuedPrefillTokens ?? 0, e.prefillBacklog);
      const load: EngineEvent = {
        type: "load",
        running: e.running,
        waiting: e.waiting,
        kvUsage: e.kvUsage,
      };
      queue.push(t + config.reportDelayMs, DELIVERY, o, 0, load);
      timeline.sample(o, t, e.running + e.waiting, e.waiting);
    });
    if (completed < w.size) queue.push(t + config.reportIntervalMs, SNAPSHOT, -1);
  };

  let now = 0;
  let next = 0;
  while (next < w.size || queue.size > 0) {
    if (next < w.size && (w.arrivalMs[next] as number) <= queue.peekTime()) {
      now = w.arrivalMs[next] as number;
      arrive(next, now);
      next++;
      continue;
    }
    const event = queue.pop();
    if (!event) break;
    now = event.t;
    switch (event.kind) {
      case ENGINE:
        if (event.version === versions[event.origin]) step(event.origin, event.t);
        break;
      case DELIVERY:
        router.ingest(ids[event.origin] as string, [event.payload as EngineEvent], event.t);
        break;
      case SNAPSHOT:
        snapshot(event.t);
        break;
    }
  }
  onProgress(completed);
  const stats = router.stats(now);
  return summarise({
    policy: router.policyName,
    ids,
    requests,
    routedTo,
    prefilled,
    engines,
    overflows,
    fallbacks,
    expired,
    reasons: stats.decisions.byReason,
    accuracy: stats.accuracy,
    timeline,
    queueEstimate: probe.summary(),
  });
}
