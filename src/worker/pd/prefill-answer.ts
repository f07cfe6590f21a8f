/**
 * What a prefill leg answered, read whole: the prefill engine's answer is one small JSON body
 * (one token) that the router reads rather than passes on, for its `usage` (whose
 * `cached_tokens` is the prefill origin's cache hit, which the index learns from) and, for
 * vLLM, the `kv_transfer_params` the decode leg needs. Bounded: at most `MAX_PREFILL_BYTES`
 * (a client's `prompt_logprobs` could make it large), each read within the pool's
 * `streamIdleTimeoutMs`.
 */
import type { EngineUsage, FailureKind } from "../../core/router/router-types.ts";
import type { AttemptResult } from "../forward/attempt.ts";
import type { Started } from "../forward/failover.ts";
import { readWithin } from "../forward/read-within.ts";
import { usageOf } from "../forward/usage-scanner.ts";

export const MAX_PREFILL_BYTES = 8 * 1024 * 1024;

export type PrefillAnswer =
  /** A 2xx JSON object: its usage, and the whole body. */
  | {
      readonly kind: "answered";
      readonly usage: EngineUsage;
      readonly body: Record<string, unknown>;
    }
  /** A 4xx: the request's own fault, whose answer the client gets (nothing read of it yet). */
  | { readonly kind: "rejected"; readonly started: Started }
  /** No answer the router can use: counted against the prefill origin. */
  | { readonly kind: "failed"; readonly failure: FailureKind };

const failed = (failure: FailureKind): PrefillAnswer => ({ kind: "failed", failure });

/** Read the answer of a prefill leg's attempt; `signal` gives up on it (the other leg failed). */
export async function prefillAnswer(
  result: AttemptResult,
  idleMs: number,
  signal?: AbortSignal,
): Promise<PrefillAnswer> {
  if (!result.ok) return failed(result.failure);
  const { response, body } = result;
  if (response.status >= 400) return { kind: "rejected", started: result };
  if (response.status >= 300 || !body) {
    body?.reader.cancel().catch(() => undefined);
    return failed("stream");
  }
  const stop = () => void body.reader.cancel().catch(() => undefined);
  signal?.addEventListener("abort", stop, { once: true });
  try {
    const text = await readAll(body.reader, body.first, idleMs);
    if (text === null) {
      stop();
      return failed("stream");
    }
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      return failed("stream");
    return {
      kind: "answered",
      usage: usageOf(parsed) ?? {},
      body: parsed as Record<string, unknown>,
    };
  } catch {
    stop();
    return failed("stream");
  } finally {
    signal?.removeEventListener("abort", stop);
  }
}

/** The whole body as text, or null when it is larger than MAX_PREFILL_BYTES or stalls. */
async function readAll(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  first: Uint8Array,
  idleMs: number,
): Promise<string | null> {
  const decoder = new TextDecoder();
  let text = decoder.decode(first, { stream: true });
  let bytes = first.byteLength;
  for (;;) {
    const read = await readWithin(reader, idleMs);
    if (read === null) return null;
    if (read.done) return text + decoder.decode();
    bytes += read.value.byteLength;
    if (bytes > MAX_PREFILL_BYTES) return null;
    text += decoder.decode(read.value, { stream: true });
  }
}
