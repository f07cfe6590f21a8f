/**
 * @module
 * `/metrics`: pools' states as Prometheus families (catalogue: metric-families.ts). Every
 * family is declared on every scrape, so its HELP and TYPE show before any traffic; a pool whose
 * object did not answer shows only `llm_router_pool_object_up 0`, never stale or partial values
 * (and in edge mode this isolate's admission, which is its own).
 * An edge pool with several coordinators shows each one's samples under a `coordinator` label.
 * Admission's figures come from the pool's object in object mode and from this isolate's
 * replica in edge mode (under an `isolate` label), as `/admin/state` shows them.
 */
import type { AdmissionStats } from "../../core/admission/admission.ts";
import type { OriginStats, RouterStats } from "../../core/router/router-types.ts";
import type { ObjectState } from "../objects/rpc-types.ts";
import { REQUEST_OUTCOMES } from "../request-record/request-report.ts";
import type { Labels, MetricFamily, MetricsWriter } from "./exposition.ts";
import { families as F } from "./metric-families.ts";
import type { PoolState } from "./pool-state.ts";

const HEALTH_STATES = ["up", "draining", "down"] as const;
const CIRCUIT_STATES = ["closed", "open", "half-open"] as const;

const ORIGIN_GAUGES: [MetricFamily, (o: OriginStats) => number | null][] = [
  [F.outstanding, (o) => o.outstanding],
  [F.queuedPrefill, (o) => o.queuedPrefillTokens],
  [F.eligible, (o) => (o.eligible ? 1 : 0)],
  [F.circuitFailures, (o) => o.consecutiveFailures],
  [F.engineRunning, (o) => o.engine?.running ?? null],
  [F.engineWaiting, (o) => o.engine?.waiting ?? null],
  [F.engineKvUsage, (o) => o.engine?.kvUsage ?? null],
  [F.engineReportAge, (o) => (o.reportAgeMs === null ? null : o.reportAgeMs / 1000)],
  [F.enginePrefillSpeed, (o) => o.measuredPrefill?.tokensPerSecond ?? null],
  [F.originFixedTime, (o) => o.prefill.fixedMs / 1000],
  [F.originSpeedSamples, (o) => o.prefill.samples],
  [F.ownedTokens, (o) => o.ownedTokens],
  [F.capacityTokens, (o) => o.capacityTokens],
];

function writeRouter(w: MetricsWriter, base: Labels, r: RouterStats): void {
  for (const [reason, n] of Object.entries(r.decisions.byReason)) {
    w.sample(F.decisions, { ...base, policy: r.policy, reason }, n);
  }
  for (const [kind, n] of Object.entries(r.failures)) {
    w.sample(F.originFailures, { ...base, kind }, n ?? 0);
  }
  for (const o of r.origins) {
    const labels = { ...base, origin: o.id };
    w.sample(F.routed, labels, o.routed);
    for (const [family, value] of ORIGIN_GAUGES) {
      const v = value(o);
      if (v !== null) w.sample(family, labels, v);
    }
    w.sample(F.originPrefillSpeed, { ...labels, source: "learned" }, o.prefill.tokensPerSecond);
    w.sample(F.originPrefillSpeed, { ...labels, source: "prior" }, o.prefill.priorTokensPerSecond);
    for (const state of HEALTH_STATES) {
      w.sample(F.health, { ...labels, state }, o.health === state ? 1 : 0);
    }
    for (const state of CIRCUIT_STATES) {
      w.sample(F.circuit, { ...labels, state }, o.circuit === state ? 1 : 0);
    }
  }
  w.sample(F.poolBytesPerToken, base, r.bytesPerToken.bytesPerToken);
  w.sample(F.indexChunks, base, r.index.chunks);
  w.sample(F.indexNodes, base, r.index.nodes);
  w.sample(F.indexOwnerships, base, r.index.ownerships);
  w.sample(F.indexBytes, base, r.index.bytes);
  const seen = new Map<string, number>();
  for (const s of r.shadows) {
    // Two shadows of one type (other parameters) would collide: number the later ones.
    const n = (seen.get(s.policy) ?? 0) + 1;
    seen.set(s.policy, n);
    const labels = { ...base, policy: n === 1 ? s.policy : `${s.policy}#${n}` };
    w.sample(F.shadowDecisions, labels, s.decisions);
    w.sample(F.shadowAgreements, labels, s.agreements);
    w.sample(F.shadowMatched, labels, s.matchedTokens);
    w.sample(F.shadowLiveMatched, labels, s.liveMatchedTokens);
    w.sample(F.shadowPrompt, labels, s.promptTokens);
  }
}

function writeRequests(w: MetricsWriter, base: Labels, state: ObjectState): void {
  const m = state.metrics;
  w.sample(F.objectStart, base, m.since / 1000);
  for (const [origin, c] of Object.entries(m.origins)) {
    const labels = { ...base, origin };
    for (const outcome of REQUEST_OUTCOMES) {
      const n = c.requests[outcome];
      if (n !== undefined) w.sample(F.requests, { ...labels, outcome }, n);
    }
    w.sample(F.usageReports, labels, c.usageReports);
    w.sample(F.promptTokens, labels, c.promptTokens);
    w.sample(F.cachedTokens, labels, c.cachedTokens);
    w.sample(F.matchedTokens, labels, c.matchedTokens);
    for (const [kind, n] of Object.entries(c.failovers)) {
      w.sample(F.failovers, { ...labels, kind }, n ?? 0);
    }
  }
  for (const [api, outcomes] of Object.entries(m.apis)) {
    for (const outcome of REQUEST_OUTCOMES) {
      const n = outcomes?.[outcome];
      if (n !== undefined) w.sample(F.apiRequests, { ...base, api, outcome }, n);
    }
  }
  for (const [reason, n] of Object.entries(m.fallbacks)) {
    w.sample(F.fallbacks, { ...base, reason }, n);
  }
  for (const [key, c] of Object.entries(m.keys)) {
    for (const outcome of REQUEST_OUTCOMES) {
      const n = c.requests[outcome];
      if (n !== undefined) w.sample(F.keyRequests, { ...base, key, outcome }, n);
    }
    w.sample(F.keyPromptTokens, { ...base, key }, c.promptTokens);
  }
  w.histogram(F.objectSeconds, base, m.latency.object);
  w.histogram(F.ttfbSeconds, base, m.latency.ttfb);
}

/** Admission's figures, as `/admin/state` shows them (`admission`). */
function writeAdmission(w: MetricsWriter, base: Labels, a: AdmissionStats): void {
  w.sample(F.admissionEnabled, base, a.enabled ? 1 : 0);
  for (const [priority, n] of Object.entries(a.waiting)) {
    w.sample(F.admissionWaiting, { ...base, priority }, n);
  }
  w.sample(F.admissionAdmitted, { ...base, when: "at-once" }, a.admitted.atOnce);
  w.sample(F.admissionAdmitted, { ...base, when: "after-wait" }, a.admitted.afterWait);
  for (const [priority, reasons] of Object.entries(a.shed)) {
    for (const [reason, n] of Object.entries(reasons)) {
      w.sample(F.admissionShed, { ...base, priority, reason }, n ?? 0);
    }
  }
  w.sample(F.admissionLeft, base, a.left);
  w.sample(F.admissionRate, base, a.admitRatePerSecond);
}

/**
 * What each pool's samples are read from: its object, or with several coordinators each one's
 * state under a `coordinator` label (its colo group). Each coordinator counts its own group's
 * requests, decisions and index, so sums over the label are the pool's; engine gauges, which
 * every coordinator hears from the root, repeat per coordinator.
 */
function sources(state: PoolState): { labels: Labels; state: ObjectState }[] {
  const { model, object, coordinators } = state;
  if (coordinators && coordinators.length > 1) {
    return coordinators.flatMap((c) =>
      c ? [{ labels: { model, coordinator: String(c.group) }, state: c }] : [],
    );
  }
  return object ? [{ labels: { model }, state: object }] : [];
}

/** The exposition of `states` (every pool in settings). */
export function writeMetrics(w: MetricsWriter, states: readonly PoolState[]): void {
  for (const family of Object.values(F)) w.declare(family);
  for (const state of states) {
    const from = sources(state);
    w.sample(F.objectUp, { model: state.model }, from.length > 0 ? 1 : 0);
    for (const { labels, state: source } of from) {
      writeRouter(w, labels, source.router);
      writeRequests(w, labels, source);
      if (source.admission) writeAdmission(w, labels, source.admission);
    }
    // An edge pool's admission is per isolate: this one's, whether or not its coordinators
    // answered (it is not theirs to be stale), under its id so that each isolate's counters
    // stay one series that only grows.
    const { replica } = state;
    if (replica) {
      writeAdmission(w, { model: state.model, isolate: replica.isolate }, replica.admission);
    }
  }
}
