/**
 * One policy replayed over one workload on a simulated fleet: the same `CoreRouter` the Durable
 * Object holds, driven exactly as production drives it, and one `Engine` per origin.
 *
 * - arrival: `route(request, now)`; the request joins its origin's engine (cutting a decode span
 *   so the engine's next iteration sees it);
 * - the response ends: `complete(ticket, { ok, promptTokens, cachedTokens, ttftMs }, now)`
 *   with the engine's own cached-token count, as vLLM reports
 *   `prompt_tokens_details.cached_tokens`, and its time to first token from when the request
 *   reached it, as the Worker measures a streamed answer's first byte (the router learns each
 *   origin's prefill speed from them: src/core/router/speed-learner.ts);
 * - what else the router hears follows the policy's information model (information.ts): at
 *   start each origin reports its KV capacity; load reports (running, waiting, KV usage) every
 *   interval, arriving late, with the engine's prefill rate since the last (prefill-counters.ts)
 *   where the policy's router reads it; the engines' KV events after each step that caches or evicts
 *   blocks (with the "engine-events" index feed); each request's first token (`firstToken`).
 * Network time is zero: TTFT is queueing plus prefill, which is what routing changes.
 * Who routes is the config's front (routing-front.ts): by default the pool's one router with
 * the Worker's fallback, as the Durable Object runs it; edge coordination's front is many
 * isolates' replicas and their coordinators (../edge/edge-front.ts), same engines, same clock.
 *
 * A P/D fleet (`SimConfig.pd`) gives the first origins role prefill and the rest decode. A
 * decision with a prefill leg sends the prefill origin's engine a one-token request (vLLM's
 * prefill leg); when it ends, the KV the decode engine lacks travels to it (`kvTransferMs`),
 * then the decode engine gets the request with that KV computed. `complete` carries the prefill
 * leg's cached tokens (`outcome.prefill`), as the Worker reports vLLM's prefill response.
 *
 * An overload replay (`SimConfig.clients`, client-front.ts) puts clients and the pool's admission
 * in front of the router: each arrival is offered to admission, which routes it then, later
 * (late binding) or sheds it; clients give up after a timeout (the engine aborts their
 * request) and retry. Requests never served are left out of the result's figures; the clients'
 * record has them.
 *
 * Same-time events run arrivals, then engine iterations, then KV transfers landing, then
 * deliveries, then the routing front's own events, then load reports, then samples, then the
 * clients' events, each in insertion order, so a seed replays a run exactly.
 */

import { BYTES_PER_TOKEN } from "../../src/core/chunk-hash.ts";
import type { EngineEvent } from "../../src/core/engine-events.ts";
import type { PolicySettings } from "../../src/core/policies/index.ts";
import type { RouteRequest } from "../../src/core/route-request.ts";
import type { RouteDecision } from "../../src/core/router/router-types.ts";
import { parsePool } from "../../src/core/settings/parse-settings.ts";
import type { PoolSettingsInput } from "../../src/core/settings/settings-schema.ts";
import { Engine, type EngineRequest, engineRequest } from "../engine/engine.ts";
import { kvTransferMs } from "../engine/kv-transfer.ts";
import type { EngineProfile } from "../engine/profiles.ts";
import { hashesOf, type Workload } from "../workload/workload.ts";
import {
  ClientFront,
  type FrontConfig,
  type FrontEvent,
  type FrontRecord,
} from "./client-front.ts";
import { EventQueue } from "./event-queue.ts";
import type { Information } from "./information.ts";
import { disaggregationRule, type PdFleet, pdRole } from "./pd-fleet.ts";
import { PrefillCounters } from "./prefill-counters.ts";
import { QueueProbe } from "./queue-probe.ts";
import type { PolicyResult } from "./result-types.ts";
import { type FrontFactory, objectFront } from "./routing-front.ts";
import { summarise } from "./summarise.ts";
import { Timeline } from "./timeline.ts";

export interface SimConfig {
  policy: PolicySettings;
  origins: number;
  /** What the router is told (its settings' prefill speed, x the calibration) and, absent
   * `originProfiles`, what every origin's engine runs. */
  profile: EngineProfile;
  /** Each origin's engine, for a mixed fleet (gpu-fleet.ts); absent: `profile` everywhere. */
  originProfiles?: readonly EngineProfile[] | undefined;
  /** Settings carry each origin's own engine speed instead of `profile`'s (`--fleet-prior exact`). */
  exactSpeeds?: boolean | undefined;
  seed: number;
  information: Information;
  /** Prefill/decode split of the `origins` (prefill + decode = origins); absent: aggregated. */
  pd?: PdFleet | null | undefined;
  /** Who routes (routing-front.ts); default the pool's one router, as the object holds it. */
  front?: FrontFactory | undefined;
  /** Clients and admission in front of the router (an overload replay); absent: none. */
  clients?: FrontConfig | null | undefined;
  /** Pool settings beyond the fleet's (e.g. `coordination` and `edge`). */
  pool?: Partial<PoolSettingsInput> | undefined;
  /**
   * Per request, the time from its arrival to its decision and its origin fetch (the round trip
   * to the pool's object in object mode, when the replay models the network); TTFT counts it.
   * Absent: zero, as everywhere else in the replay.
   */
  routeDelayMs?: Float64Array | undefined;
  /** Called once at the end with every request as its engine saw it and where it went. */
  observe?:
    | ((run: { requests: readonly EngineRequest[]; routedTo: Int32Array }) => void)
    | undefined;
}

/** A replay's result, with the clients' record in an overload replay. */
export interface SimOutcome {
  result: PolicyResult;
  clients: FrontRecord | null;
}

const ENGINE = 1;
const TRANSFER = 2;
const DELIVERY = 3;
/** A routing front's own event (routing-front.ts), e.g. a sync arriving. */
const FRONT = 4;
const REPORT = 5;
const SAMPLE = 6;
/** The clients' and admission's events (client-front.ts). */
const CLIENTS = 7;
/** Period of the diagnostics (queue probe, timeline), whatever the policy is told. */
const SAMPLE_MS = 1000;

export function simulatePolicy(
  w: Workload,
  config: SimConfig,
  onProgress: (completed: number) => void = () => {},
): PolicyResult {
  return simulate(w, config, onProgress).result;
}

export function simulate(
  w: Workload,
  config: SimConfig,
  onProgress: (completed: number) => void = () => {},
): SimOutcome {
  const { profile, origins, information: info } = config;
  const fleet = config.pd ?? null;
  if (fleet && fleet.prefill + fleet.decode !== origins) {
    throw new Error(`P/D fleet ${fleet.prefill}:${fleet.decode} is not ${origins} origins`);
  }
  if (fleet && config.clients) throw new Error("an overload replay runs an aggregated fleet");
  const engineProfile = (i: number) => config.originProfiles?.[i] ?? profile;
  if (config.originProfiles && config.originProfiles.length !== origins) {
    throw new Error(`${config.originProfiles.length} origin profiles for ${origins} origins`);
  }
  const ids = Array.from({ length: origins }, (_, i) => `gpu-${i}`);
  const indexOf = new Map(ids.map((id, i) => [id, i]));
  const pool = parsePool({
    origins: ids.map((id, i) => ({
      id,
      url: `http://${id}.sim`,
      kvCapacityTokens: engineProfile(i).kvCapacityTokens,
      prefillTokensPerSecond:
        (config.exactSpeeds ? engineProfile(i) : profile).prefillTokensPerSecond *
        info.prefillCalibration,
      ...pdRole(fleet, i),
    })),
    policy: config.policy,
    chunkBytes: w.chunkTokens * BYTES_PER_TOKEN,
    indexFeed: info.indexFeed,
    ...(fleet ? { disaggregation: disaggregationRule(fleet) } : {}),
    ...config.pool,
  });
  const prefillRole = pool.origins.map((o) => o.role === "prefill");
  const wholeOnPrefill = pool.disaggregation.prefillServesWhole;
  const kvEvents = info.indexFeed === "engine-events";
  const engines = ids.map((_, i) => new Engine(engineProfile(i), w.chunkTokens, { kvEvents }));
  const versions = new Int32Array(origins);
  const due = new Float64Array(origins).fill(Number.NaN);
  const queue = new EventQueue();
  const span = w.size > 0 ? (w.arrivalMs[w.size - 1] as number) : 0;
  const timeline = new Timeline(origins, Math.max(SAMPLE_MS, span / 100));
  const probe = new QueueProbe();
  const front = (config.front ?? objectFront)({
    pool,
    model: w.model,
    seed: config.seed,
    size: w.size,
    schedule: (t, fn) => queue.push(t, FRONT, -1, 0, fn),
    place: (i, decision, t) => place(i, decision, t),
  });

  const requests: (EngineRequest | undefined)[] = new Array(w.size);
  /** The prefill leg of each disaggregated request, on its prefill origin's engine. */
  const prefillLegs: (EngineRequest | undefined)[] = new Array(w.size);
  const transferMs: number[] = [];
  const routedTo = new Int32Array(w.size);
  /** When each request reached its engine (the origin's TTFB counts from there). */
  const placedAt = new Float64Array(w.size);
  const prefilled = new Float64Array(origins);
  const prefillCounters = info.prefillRates ? new PrefillCounters(origins) : null;
  let overflows = 0;
  let expired = 0;
  let completed = 0;

  ids.forEach((id, i) => {
    const kvCapacityTokens = engineProfile(i).kvCapacityTokens;
    front.ingest(id, [{ type: "capacity", kvCapacityTokens }], 0);
  });
  if (w.size > 0) queue.push(SAMPLE_MS, SAMPLE, -1);
  if (w.size > 0 && info.loadReports) queue.push(info.loadReports.intervalMs, REPORT, -1);

  const wake = (o: number, t: number) => {
    due[o] = t;
    versions[o] = (versions[o] as number) + 1;
    queue.push(t, ENGINE, o, versions[o]);
  };

  /** `r` joins engine `o` at `t`, cutting a decode span so its next iteration sees it. */
  const submit = (o: number, r: EngineRequest, t: number) => {
    const engine = engines[o] as Engine;
    engine.enqueue(r);
    if (engine.busy) {
      const end = engine.interrupt(t);
      if (end !== due[o]) wake(o, end);
    } else if (Number.isNaN(due[o] as number)) {
      wake(o, t);
    }
  };

  const clientConfig = config.clients ?? null;
  /** Each request offered to admission, so its decision reaches the front under its number. */
  const offered = new Map<RouteRequest, number>();
  const routeRequest = (i: number): RouteRequest => {
    const request = {
      chunkHashes: hashesOf(w, i),
      promptTokens: w.promptTokens[i] as number,
      // A workload is in tokens of BYTES_PER_TOKEN canonical bytes each (its chunkBytes too),
      // so the router learns exactly that ratio (router/bytes-per-token.ts) and estimates as before.
      promptBytes: (w.promptTokens[i] as number) * BYTES_PER_TOKEN,
      client: clientConfig?.clientOf(i),
    };
    if (clientConfig) offered.set(request, i);
    return request;
  };
  // The engine request's arrival: the client's (TTFT counts the route's delay and any wait the
  // front made, e.g. an edge isolate's sync); with clients, when it was placed (after any wait
  // at admission, which the clients count).
  const startOf = (i: number, t: number) =>
    config.routeDelayMs || !clientConfig ? (w.arrivalMs[i] as number) : t;

  /** Request i, routed by the front at `t` (`decision`, always naming an origin), goes there. */
  const place = (i: number, decision: RouteDecision, t: number) => {
    const hashes = hashesOf(w, i);
    const promptTokens = w.promptTokens[i] as number;
    const o = indexOf.get(decision.origin as string) as number;
    const p = decision.prefill ? (indexOf.get(decision.prefill.origin) as number) : -1;
    routedTo[i] = o;
    // Engine truth at arrival: did another origin that could have prefilled it (prefill
    // origins for a remote prefill; for one served whole, the others, and prefill origins too
    // where they serve whole) hold a longer prefix than the one chosen?
    const prefiller = p >= 0 ? p : o;
    const limit = Math.floor((promptTokens - 1) / w.chunkTokens);
    const chosen = (engines[prefiller] as Engine).cache.lookup(hashes, limit);
    const couldPrefill = (k: number) =>
      p >= 0 ? prefillRole[k] : wholeOnPrefill || !prefillRole[k];
    const rival = (e: Engine, k: number) =>
      couldPrefill(k) && e.cache.lookup(hashes, limit) > chosen;
    if (engines.some(rival)) overflows++;
    if (p >= 0) {
      // The prefill leg: one output token, as the Worker asks vLLM's prefill engine.
      const leg = engineRequest(i, hashes, promptTokens, 1, startOf(i, t));
      prefillLegs[i] = leg;
      submit(p, leg, t);
      return;
    }
    const output = w.outputTokens[i] as number;
    const r = engineRequest(i, hashes, promptTokens, output, startOf(i, t));
    requests[i] = r;
    placedAt[i] = t;
    submit(o, r, t);
  };

  const clients =
    clientConfig &&
    new ClientFront(
      w.size,
      {
        route: (request, t) => {
          const i = offered.get(request) as number;
          offered.delete(request);
          const decision = front.route(i, request, t);
          if (!decision) throw new Error("an overload replay's front decides at once");
          return decision;
        },
        waitMs: (t, meanWork) => {
          if (!front.waitMs) throw new Error("an overload replay runs the pool's one router");
          return front.waitMs(t, meanWork);
        },
      },
      routeRequest,
      clientConfig,
      {
        place,
        abandon: (i, t) => {
          (engines[routedTo[i] as number] as Engine).abort(requests[i] as EngineRequest);
          // As the Worker reports a client that left: not ok, nobody blamed.
          front.complete(i, { ok: false }, t);
        },
        schedule: (t, payload) => queue.push(t, CLIENTS, -1, 0, payload),
      },
    );

  const arrive = (i: number, t: number) => {
    if (clients) clients.arrive(i, t);
    else {
      const decision = front.route(i, routeRequest(i), t);
      if (decision) place(i, decision, t);
    }
  };

  /** A prefill leg ended at `t`: the KV its decode engine lacks travels there. */
  const prefilledRemotely = (leg: EngineRequest, t: number) => {
    const o = routedTo[leg.id] as number;
    const held = (engines[o] as Engine).cache.lookup(leg.hashes, leg.hashes.length);
    const ms = kvTransferMs(profile, leg.promptTokens - 1 - held * w.chunkTokens);
    transferMs.push(ms);
    queue.push(t + ms, TRANSFER, o, 0, leg.id);
  };

  /** The KV of request `i` reached its decode engine `o` at `t`. */
  const transferred = (i: number, o: number, t: number) => {
    const leg = prefillLegs[i] as EngineRequest;
    const output = w.outputTokens[i] as number;
    const remote = leg.promptTokens - 1;
    const r = engineRequest(i, leg.hashes, leg.promptTokens, output, leg.arrivalMs, remote);
    requests[i] = r;
    submit(o, r, t);
  };

  const finish = (r: EngineRequest, t: number) => {
    const leg = prefillLegs[r.id];
    if (leg === r) return prefilledRemotely(leg, t);
    const prefill = leg && { promptTokens: leg.promptTokens, cachedTokens: leg.cachedTokens };
    const outcome = {
      ok: true,
      promptTokens: r.promptTokens,
      cachedTokens: r.cachedTokens,
      ttftMs: leg ? undefined : r.firstTokenMs - (placedAt[r.id] as number),
      prefill,
    };
    if (!front.complete(r.id, outcome, t)) expired++;
    clients?.released();
    if (++completed % 256 === 0) onProgress(completed);
  };

  const step = (o: number, t: number) => {
    const engine = engines[o] as Engine;
    due[o] = Number.NaN;
    if (engine.busy) {
      const result = engine.finish();
      prefilled[o] = (prefilled[o] as number) + result.prefilledTokens;
      if (info.firstToken) for (const r of result.started) firstToken(r, t);
      if (clients) for (const r of result.started) clients.firstToken(r.id, t);
      for (const r of result.done) finish(r, t);
    }
    const end = engine.start(t);
    if (end !== null) wake(o, end);
    if (kvEvents) {
      const events: EngineEvent[] = engine.takeKvEvents();
      if (events.length > 0) queue.push(t + info.kvEventDelayMs, DELIVERY, o, 0, events);
    }
  };

  const firstToken = (r: EngineRequest, t: number) => {
    // A prefill leg's token is not the client's: the decode engine's first one is (and tells
    // the router both legs are past their prefill).
    if (prefillLegs[r.id] === r) return;
    front.firstToken(r.id, t);
  };

  const report = (t: number, reports: NonNullable<Information["loadReports"]>) => {
    engines.forEach((e, o) => {
      const events: EngineEvent[] = [
        { type: "load", running: e.running, waiting: e.waiting, kvUsage: e.kvUsage },
      ];
      const rate = prefillCounters?.read(o, prefilled[o] as number, e.prefillBusyMs);
      if (rate) events.push(rate);
      queue.push(t + reports.delayMs, DELIVERY, o, 0, events);
    });
    if (unsettled()) queue.push(t + reports.intervalMs, REPORT, -1);
  };

  const sample = (t: number) => {
    const queued = front.queued(t);
    engines.forEach((e, o) => {
      probe.sample(queued[o] ?? 0, e.prefillBacklog);
      timeline.sample(o, t, e.running + e.waiting, e.waiting);
    });
    if (unsettled()) queue.push(t + SAMPLE_MS, SAMPLE, -1);
  };

  /** Some request has yet to complete, or (in an overload replay) to fail for good. */
  const unsettled = () => completed + (clients?.failed ?? 0) < w.size;

  let now = 0;
  // Requests reach the router in order of arrival plus their route delay.
  const delay = config.routeDelayMs;
  const reach = (i: number) => (w.arrivalMs[i] as number) + (delay ? (delay[i] as number) : 0);
  const order = Int32Array.from({ length: w.size }, (_, i) => i);
  if (delay) order.sort((a, b) => reach(a) - reach(b) || a - b);
  let next = 0;
  while (next < w.size || queue.size > 0) {
    if (next < w.size && reach(order[next] as number) <= queue.peekTime()) {
      const i = order[next] as number;
      now = reach(i);
      arrive(i, now);
      next++;
      clients?.settle(now);
      continue;
    }
    const event = queue.pop();
    if (!event) break;
    now = event.t;
    switch (event.kind) {
      case ENGINE:
        if (event.version === versions[event.origin]) step(event.origin, event.t);
        break;
      case TRANSFER:
        transferred(event.payload as number, event.origin, event.t);
        break;
      case DELIVERY:
        front.ingest(ids[event.origin] as string, event.payload as EngineEvent[], event.t);
        clients?.reported();
        break;
      case FRONT:
        (event.payload as (t: number) => void)(event.t);
        break;
      case REPORT:
        if (info.loadReports) report(event.t, info.loadReports);
        break;
      case SAMPLE:
        sample(event.t);
        break;
      case CLIENTS:
        clients?.event(event.payload as FrontEvent, event.t);
        break;
    }
    clients?.settle(now);
  }
  onProgress(completed);
  // Without clients every request was placed, so each has its engine request.
  config.observe?.({ requests: requests as EngineRequest[], routedTo });
  const stats = front.stats(now);
  const result = summarise({
    policy: stats.policy,
    ids,
    requests,
    prefillLegs,
    pd: fleet && { fleet, reasons: stats.pd.byReason, transferMs },
    routedTo,
    prefilled,
    engines,
    overflows,
    fallbacks: front.fallbacks,
    expired,
    reasons: stats.decisions.byReason,
    accuracy: stats.accuracy,
    timeline,
    queueEstimate: probe.summary(),
  });
  return { result, clients: clients?.record ?? null };
}
