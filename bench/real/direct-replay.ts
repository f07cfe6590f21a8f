/**
 * Timed requests routed by the router's core in this process, sent straight to real engines:
 * what the Durable Object does, without wrangler (whose workerd would share the CPU cores the
 * engines prefill on). Each request is hashed as the edge hashes it, routed, sent streaming with
 * usage, its first body byte reported (`firstToken`) and its end completed with the time to
 * first byte and the engine's usage, as the Worker does; a reporter loop per engine feeds the
 * core the engine's events as `npm run reporter` would. Returns each request's engine timings.
 */
import type { EngineEvent } from "../../src/core/engine-events.ts";
import { promptKey } from "../../src/core/prompt/prompt-key.ts";
import type { CoreRouter } from "../../src/core/router/core-router.ts";
import type { ReplayRequest } from "../../tools/replay/replay.ts";
import { readEngineMetrics } from "../../tools/reporter/engine-metrics.ts";
import { type Observation, ReporterState } from "../../tools/reporter/reporter-state.ts";
import type { PrefillTiming } from "./prefill-truth.ts";

export interface DirectEngine {
  id: string;
  url: string;
}

export interface DirectResult extends PrefillTiming {
  origin: string | null;
  ok: boolean;
  ttftMs: number | null;
  /** The engine's `cached_tokens`. */
  cachedTokens: number;
  /** Prefill work the router believed queued at the origin when it routed the request. */
  queuedTokens: number;
}

const REPORT_INTERVAL_MS = 500;

async function look(url: string): Promise<Observation> {
  try {
    const res = await fetch(new URL("/metrics", url), { signal: AbortSignal.timeout(5000) });
    if (!res.ok) return { ok: false, alive: true };
    return { ok: true, sample: readEngineMetrics(await res.text(), "llamacpp") };
  } catch {
    return { ok: false };
  }
}

/** Usage and timings from the last SSE events of a streamed chat answer. */
function lastUsage(sse: string): { usage?: Record<string, unknown>; timings?: PrefillTimings } {
  let found = {};
  for (const line of sse.split("\n")) {
    if (!line.startsWith("data: {")) continue;
    const event = JSON.parse(line.slice(6)) as { usage?: unknown; timings?: unknown };
    if (event.usage) found = event;
  }
  return found;
}

interface PrefillTimings {
  prompt_n: number;
  prompt_ms: number;
}

async function send(
  router: CoreRouter,
  engines: readonly DirectEngine[],
  chunkBytes: number,
  r: ReplayRequest,
): Promise<DirectResult> {
  const body = {
    model: r.model,
    messages: [{ role: "user", content: r.text }],
    max_tokens: r.maxTokens,
    stream: true,
    stream_options: { include_usage: true },
  };
  const key = promptKey(body, chunkBytes);
  const request = {
    chunkHashes: key.chunkHashes,
    promptTokens: key.promptTokens,
    promptBytes: key.byteLength,
  };
  const queued = router.stats(performance.now()).origins;
  const d = router.route(request, performance.now());
  const queuedTokens = queued.find((o) => o.id === d.origin)?.queuedPrefillTokens ?? 0;
  const failed = {
    origin: d.origin,
    ok: false,
    ttftMs: null,
    endMs: 0,
    promptMs: 0,
    promptTokens: 0,
    cachedTokens: 0,
    queuedTokens,
  };
  const engine = engines.find((e) => e.id === d.origin);
  if (!engine || d.ticket === null) return failed;
  const started = performance.now();
  try {
    const res = await fetch(`${engine.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok || !res.body) throw new Error(`${engine.id}: ${res.status}`);
    const decoder = new TextDecoder();
    let text = "";
    let firstMs: number | null = null;
    for await (const chunk of res.body) {
      if (firstMs === null) {
        firstMs = performance.now();
        router.firstToken(d.ticket, firstMs);
      }
      text += decoder.decode(chunk, { stream: true });
    }
    const { usage, timings } = lastUsage(text);
    const details = usage?.prompt_tokens_details as { cached_tokens?: number } | undefined;
    const ttftMs = (firstMs ?? performance.now()) - started;
    router.complete(
      d.ticket,
      {
        ok: true,
        ttftMs,
        promptTokens: usage?.prompt_tokens as number | undefined,
        cachedTokens: details?.cached_tokens,
      },
      performance.now(),
    );
    return {
      origin: engine.id,
      ok: true,
      ttftMs,
      endMs: firstMs ?? started,
      promptMs: timings?.prompt_ms ?? 0,
      promptTokens: timings?.prompt_n ?? 0,
      cachedTokens: details?.cached_tokens ?? 0,
      queuedTokens,
    };
  } catch {
    router.complete(d.ticket, { ok: false, failure: "connect" }, performance.now());
    return failed;
  }
}

/** Sends each request at its time through `router` to `engines`; resolves when all ended. */
export async function directReplay(
  router: CoreRouter,
  engines: readonly DirectEngine[],
  chunkBytes: number,
  requests: readonly ReplayRequest[],
  onDone?: (done: number) => void,
): Promise<DirectResult[]> {
  const reporting = new AbortController();
  const reporters = engines.map(async (e) => {
    const state = new ReporterState();
    while (!reporting.signal.aborted) {
      const events: EngineEvent[] = state.observe(await look(e.url));
      router.ingest(e.id, events, performance.now());
      router.expire(performance.now());
      await new Promise((r) => setTimeout(r, REPORT_INTERVAL_MS));
    }
  });
  const start = performance.now();
  let done = 0;
  const results = await Promise.all(
    requests.map(async (r) => {
      await new Promise((wake) =>
        setTimeout(wake, Math.max(0, start + r.atMs - performance.now())),
      );
      const result = await send(router, engines, chunkBytes, r);
      onDone?.(++done);
      return result;
    }),
  );
  reporting.abort();
  await Promise.all(reporters);
  return results;
}
