/**
 * SGLang's bootstrap protocol (python/sglang/srt/disaggregation/mini_lb.py; SGLang's gateway,
 * pd_router.rs): both legs at once, each with `bootstrap_host` and `bootstrap_port` (where the
 * prefill origin's bootstrap server listens: engine-address.ts) and one `bootstrap_room`, drawn
 * at random below 2^53 so that JavaScript and Python read the same integer. The decode engine
 * waits in the room for the prefill engine's KV. The decode leg (the client's bytes plus the
 * fields) streams to the client; the prefill leg (leg-bodies.ts) is read whole in the
 * background for its usage. One leg failing before the decode's first byte aborts the other;
 * then outcomes.ts says what follows.
 */
import type { OriginSettings } from "../../core/settings/settings-schema.ts";
import { attempt } from "../forward/attempt.ts";
import { type ForwardInput, tryInTurn } from "../forward/failover.ts";
import { bootstrapPort, engineHost } from "./engine-address.ts";
import { sglangPrefillBody, withFields } from "./leg-bodies.ts";
import { answer, passRejection, serveAlone } from "./outcomes.ts";
import { type PrefillAnswer, prefillAnswer } from "./prefill-answer.ts";

/** A random integer in [0, 2^53): exact in JavaScript, as SGLang's (Python) rooms are. */
export function bootstrapRoom(): number {
  const [high, low] = crypto.getRandomValues(new Uint32Array(2)) as unknown as [number, number];
  return (high & 0x1fffff) * 2 ** 32 + low;
}

export async function serveSglang(
  input: ForwardInput,
  prefill: OriginSettings,
  decode: OriginSettings,
  matchedTokens: number,
): Promise<Response> {
  const { pool, record, env } = input;
  const bootstrap = {
    bootstrap_host: engineHost(prefill),
    bootstrap_port: bootstrapPort(prefill),
    bootstrap_room: bootstrapRoom(),
  };
  const timeoutMs = pool.firstByteTimeoutMs;
  const stopPrefill = new AbortController();
  const stopDecode = new AbortController();
  const prefillLeg = attempt(env, prefill, {
    ...input.request,
    body: sglangPrefillBody(input.json, bootstrap),
    timeoutMs,
    signal: stopPrefill.signal,
  }).then((result) => prefillAnswer(result, pool.streamIdleTimeoutMs, stopPrefill.signal));
  const decodeLeg = attempt(env, decode, {
    ...input.request,
    body: withFields(input.request.body, bootstrap),
    timeoutMs,
    signal: stopDecode.signal,
  });
  const early = await Promise.race([
    decodeLeg.then(() => null),
    prefillLeg.then((a): PrefillAnswer | null => (a.kind === "answered" ? null : a)),
  ]);
  if (early !== null) {
    // The prefill leg failed or refused before the decode answered: the decode leg would wait
    // in its room for KV that will not come.
    stopDecode.abort();
    void decodeLeg.then((r) => {
      if (r.ok) r.body?.reader.cancel().catch(() => undefined);
    });
    if (early.kind === "rejected")
      return passRejection(input, prefill, early.started, matchedTokens);
    if (early.kind === "failed") return serveAlone(input, prefill, early.failure);
  }
  const decoded = await decodeLeg;
  if (!decoded.ok) {
    stopPrefill.abort();
    return answer(input, await tryInTurn(input, { result: decoded }), prefill.id);
  }
  // The decode engine took the KV: the prefill's answer, whenever it comes, reports its usage.
  const settled = prefillLeg.then((a) => {
    if (a.kind === "answered")
      record.prefill = { origin: prefill.id, matchedTokens, usage: a.usage };
    else if (a.kind === "rejected") a.started.body?.reader.cancel().catch(() => undefined);
  });
  return answer(input, await tryInTurn(input, { result: decoded }), prefill.id, settled);
}
