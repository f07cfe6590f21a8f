/**
 * @module
 * Every family `/metrics` exposes, in one place, named by Prometheus' conventions
 * (https://prometheus.io/docs/practices/naming/): the `llm_router_` prefix, `_total` for
 * counters, base units (`_seconds`, `_tokens`, `_ratio`, `_bytes`), and the labels `model`,
 * `origin`, `policy`, `reason`, `outcome`, `kind`, `api` (the API a request came in by), `key` (a client key's id, bounded: see
 * pool-metrics/key-counters.ts), `priority` and `when` (admission's), `isolate` (an edge
 * isolate's id), and `state` for an enum (one series per state, 1 for the
 * current one). docs/api.md lists them; the browser test checks it lists them all.
 */
import { metricFamily as f } from "./exposition.ts";

const P = "llm_router_";

export const families = {
  objectUp: f(`${P}pool_object_up`, "gauge", "1 if the pool's object answered this scrape."),
  objectStart: f(
    `${P}object_start_time_seconds`,
    "gauge",
    "When the pool's object started counting (counters reset then).",
  ),
  // Requests, from the report the Worker sends with each completion.
  requests: f(`${P}requests_total`, "counter", "Requests by serving origin and outcome."),
  apiRequests: f(
    `${P}api_requests_total`,
    "counter",
    "Requests by the API they came in by (chat, completions, messages, responses) and outcome.",
  ),
  usageReports: f(
    `${P}usage_reports_total`,
    "counter",
    "Completions whose usage reported cached tokens.",
  ),
  promptTokens: f(
    `${P}prompt_tokens_total`,
    "counter",
    "Engine-reported prompt tokens, over usage reports.",
  ),
  cachedTokens: f(
    `${P}cached_tokens_total`,
    "counter",
    "Engine-reported cached prompt tokens, over usage reports.",
  ),
  matchedTokens: f(
    `${P}matched_tokens_total`,
    "counter",
    "Prompt tokens the router believed cached at the serving origin, over usage reports.",
  ),
  failovers: f(
    `${P}failovers_total`,
    "counter",
    "Requests moved off the origin to another before its first byte, by failure kind.",
  ),
  fallbacks: f(
    `${P}fallbacks_total`,
    "counter",
    "Requests the Worker routed alone (the object did not answer), by reason.",
  ),
  keyRequests: f(
    `${P}key_requests_total`,
    "counter",
    "Requests by client key id (the object's first 32, then other) and outcome.",
  ),
  keyPromptTokens: f(
    `${P}key_prompt_tokens_total`,
    "counter",
    "Engine-reported prompt tokens by client key id (the object's first 32, then other).",
  ),
  objectSeconds: f(
    `${P}route_object_seconds`,
    "histogram",
    "Round trip of the route call to the pool's object.",
  ),
  ttfbSeconds: f(`${P}ttfb_seconds`, "histogram", "Origin time to first byte."),
  // Routing, from the core's stats.
  decisions: f(`${P}decisions_total`, "counter", "Routing decisions by policy and reason."),
  routed: f(`${P}routed_total`, "counter", "Decisions that chose the origin."),
  originFailures: f(
    `${P}origin_failures_total`,
    "counter",
    "Failed attempts counted against origins' circuits, by failure kind.",
  ),
  outstanding: f(
    `${P}outstanding_requests`,
    "gauge",
    "Requests routed to the origin and not yet ended.",
  ),
  queuedPrefill: f(
    `${P}queued_prefill_tokens`,
    "gauge",
    "Estimated prompt tokens waiting for prefill at the origin.",
  ),
  eligible: f(`${P}origin_eligible`, "gauge", "1 if the origin may take new requests."),
  health: f(`${P}origin_health`, "gauge", "Origin health from webhooks (1 for the current state)."),
  circuit: f(`${P}circuit_state`, "gauge", "Origin circuit breaker (1 for the current state)."),
  circuitFailures: f(
    `${P}circuit_consecutive_failures`,
    "gauge",
    "Consecutive failures the origin's circuit breaker has counted.",
  ),
  engineRunning: f(
    `${P}engine_running_requests`,
    "gauge",
    "Running requests in the engine's last report.",
  ),
  engineWaiting: f(
    `${P}engine_waiting_requests`,
    "gauge",
    "Waiting requests in the engine's last report.",
  ),
  engineKvUsage: f(
    `${P}engine_kv_usage_ratio`,
    "gauge",
    "KV cache usage (0..1) in the engine's last report.",
  ),
  engineReportAge: f(
    `${P}engine_report_age_seconds`,
    "gauge",
    "Age of the engine's last load report.",
  ),
  enginePrefillSpeed: f(
    `${P}engine_prefill_tokens_per_second`,
    "gauge",
    "Prefill speed the engine last measured (prefill-rate report).",
  ),
  originPrefillSpeed: f(
    `${P}origin_prefill_tokens_per_second`,
    "gauge",
    "Prefill speed: source=learned is what routing reads (learned from TTFTs and engine counters, or the prior corrected as its peers' were), source=prior the settings' value.",
  ),
  originFixedTime: f(
    `${P}origin_fixed_seconds`,
    "gauge",
    "Learned fixed time per request before prefill (TTFT's intercept).",
  ),
  originSpeedSamples: f(
    `${P}origin_prefill_samples`,
    "gauge",
    "Samples behind the learned prefill speed (0: none yet).",
  ),
  ownedTokens: f(
    `${P}index_owned_tokens`,
    "gauge",
    "Prompt tokens the index believes the origin holds.",
  ),
  capacityTokens: f(
    `${P}index_capacity_tokens`,
    "gauge",
    "Prompt tokens the index lets the origin hold (learned from engine usage).",
  ),
  poolBytesPerToken: f(
    `${P}pool_bytes_per_token`,
    "gauge",
    "Canonical prompt bytes per engine prompt token, learned from engines' prompt_tokens (prior 4): how the router turns bytes into tokens.",
  ),
  indexChunks: f(`${P}index_chunks`, "gauge", "Distinct prompt chunks in the pool's index."),
  indexNodes: f(`${P}index_nodes`, "gauge", "Radix nodes in the pool's index."),
  indexOwnerships: f(
    `${P}index_ownerships`,
    "gauge",
    "(chunk, origin) ownerships in the pool's index.",
  ),
  indexBytes: f(`${P}index_bytes`, "gauge", "Memory held by the pool's index."),
  // Admission (src/core/admission): the pool's object's in object mode, the scraped isolate's
  // in edge mode (under `isolate`).
  admissionEnabled: f(
    `${P}admission_enabled`,
    "gauge",
    "1 if the pool has admission settings (requests past its objective wait or are shed).",
  ),
  admissionWaiting: f(
    `${P}admission_waiting_requests`,
    "gauge",
    "Requests waiting in admission now, by priority.",
  ),
  admissionAdmitted: f(
    `${P}admission_admitted_total`,
    "counter",
    "Requests admission sent to an origin: when=at-once without waiting, after-wait once they had waited.",
  ),
  admissionShed: f(
    `${P}admission_shed_total`,
    "counter",
    "Requests admission refused (503, or 429 over-share), by priority and reason.",
  ),
  admissionLeft: f(
    `${P}admission_left_total`,
    "counter",
    "Clients that left while their request waited in admission.",
  ),
  admissionRate: f(
    `${P}admission_rate_per_second`,
    "gauge",
    "Admissions per second over the last 10 s: what admission divides a queue by to tell a request's wait.",
  ),
  // Shadow policies (counterfactual figures; see src/core/router/shadow-evaluation.ts).
  shadowDecisions: f(
    `${P}shadow_decisions_total`,
    "counter",
    "Requests the shadow policy was asked about.",
  ),
  shadowAgreements: f(
    `${P}shadow_agreements_total`,
    "counter",
    "Shadow decisions that named the live policy's origin.",
  ),
  shadowMatched: f(
    `${P}shadow_matched_tokens_total`,
    "counter",
    "Prompt tokens cached at the shadow policy's choices.",
  ),
  shadowLiveMatched: f(
    `${P}shadow_live_matched_tokens_total`,
    "counter",
    "Prompt tokens cached at the live policy's choices, over the same requests.",
  ),
  shadowPrompt: f(
    `${P}shadow_prompt_tokens_total`,
    "counter",
    "Prompt tokens of the requests the shadow policy was asked about.",
  ),
};
