/**
 * The bodies of a disaggregated request's legs. The client's bytes go to origins untouched
 * everywhere else; a P/D leg needs the router's own fields in it (which the client may not
 * send: validation/router-owned-fields.ts), so:
 *
 * - a decode leg is the client's bytes with the fields appended inside the top-level object
 *   (`withFields`): every byte the client sent reaches the engine as it was;
 * - a prefill leg, which changes the client's fields, is built once from the parsed body and
 *   serialised again. JSON.parse reads numbers as doubles, so an integer beyond 2^53 (a large
 *   `seed`, say) reaches the prefill engine rounded; nothing the prefill leg returns depends on
 *   it, and the decode leg, which samples the answer, gets the client's bytes.
 */

/** vLLM's NixlConnector: what the prefill leg asks for (toy_proxy_server.py). */
export const NIXL_PREFILL_PARAMS = {
  do_remote_decode: true,
  do_remote_prefill: false,
  remote_engine_id: null,
  remote_block_ids: null,
  remote_host: null,
  remote_port: null,
} as const;

/** Fields a prefill leg leaves out: it answers at once, with one token, as JSON. */
const PREFILL_DROPS = ["stream_options", "min_tokens", "min_completion_tokens"];

/**
 * The vllm-nixl prefill leg, as vLLM's toy proxy builds it: the client's body with
 * `kv_transfer_params` asking for a remote decode, `stream: false`, `max_tokens: 1` (and
 * `max_completion_tokens: 1` when the client set it), without `stream_options`, `min_tokens`
 * and `min_completion_tokens`.
 */
export function nixlPrefillBody(json: Readonly<Record<string, unknown>>): string {
  const body: Record<string, unknown> = { ...json, kv_transfer_params: NIXL_PREFILL_PARAMS };
  for (const field of PREFILL_DROPS) delete body[field];
  body.stream = false;
  body.max_tokens = 1;
  if (Object.hasOwn(json, "max_completion_tokens")) body.max_completion_tokens = 1;
  return JSON.stringify(body);
}

/**
 * The sglang prefill leg: the client's body with the bootstrap fields, as SGLang's mini_lb sends
 * both legs, but `stream: false` without `stream_options`: the router drains the prefill's
 * answer and reads its usage from one JSON body (a stream carries usage only when the client
 * asked for it). The prefill engine samples one token either way.
 */
export function sglangPrefillBody(
  json: Readonly<Record<string, unknown>>,
  bootstrap: Readonly<Record<string, unknown>>,
): string {
  const body: Record<string, unknown> = { ...json, ...bootstrap };
  delete body.stream_options;
  body.stream = false;
  return JSON.stringify(body);
}

const CLOSE_BRACE = 0x7d;
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * The client's JSON object (`bytes`) with `fields` appended after its last member. The caller
 * has parsed `bytes` as an object with members (`model` at least) and refused bodies that
 * already set any of `fields`.
 */
export function withFields(
  bytes: ArrayBuffer,
  fields: Readonly<Record<string, unknown>>,
): Uint8Array<ArrayBuffer> {
  const source = new Uint8Array(bytes);
  let end = source.length - 1;
  while (end >= 0 && WHITESPACE.has(source[end] as number)) end--;
  if (source[end] !== CLOSE_BRACE) throw new Error("withFields: the body is not a JSON object");
  const members = JSON.stringify(fields).slice(1, -1);
  const added = new TextEncoder().encode(`,${members}`);
  const out = new Uint8Array(source.length + added.length);
  out.set(source.subarray(0, end), 0);
  out.set(added, end);
  out.set(source.subarray(end), end + added.length);
  return out;
}
