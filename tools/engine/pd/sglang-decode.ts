/**
 * An SGLang decode engine (`--disaggregation-mode decode`), as the router drives it
 * (python/sglang/srt/disaggregation/decode.py): each request names its prefill engine's
 * bootstrap server (`bootstrap_host`, `bootstrap_port`) and a `bootstrap_room`; the engine
 * waits there for the room's KV, then decodes. It reports the prefill engine's prefix-cache hit
 * as its own `cached_tokens` (SGLang's decode copies `cached_tokens` from the transfer's
 * metadata), so its count is the prefill's. A decode-mode engine has no prefill path: a request
 * without the three fields, or whose transfer fails or times out, fails (HTTP 500).
 */
import { type PdRole, sameBlocks, serverError } from "./pd-role.ts";
import type { RoomKv } from "./sglang-rooms.ts";
import { callSide } from "./side-server.ts";

export interface SglangDecodeOptions {
  readonly bootstrapTimeoutMs: number;
}

export function sglangDecode(options: SglangDecodeOptions): PdRole {
  return {
    endpoint: null,
    async admit(request) {
      const { bootstrap_host: host, bootstrap_port: port, bootstrap_room: room } = request.body;
      if (typeof host !== "string" || !Number.isInteger(port) || !Number.isSafeInteger(room))
        return serverError(
          "this engine runs in disaggregation mode decode: bootstrap_host, bootstrap_port and bootstrap_room are required",
        );
      const at = `${host.includes(":") ? `[${host}]` : host}:${String(port)}`;
      let reply: Awaited<ReturnType<typeof callSide>>;
      try {
        reply = await callSide(`http://${at}/room/${String(room)}`, {
          method: "GET",
          timeoutMs: options.bootstrapTimeoutMs + 1000,
          signal: request.signal,
        });
      } catch (error) {
        return serverError(`KV transfer from bootstrap server ${at} failed: ${String(error)}`);
      }
      const kv = reply.body as RoomKv | null;
      if (reply.status !== 200 || !kv || !Array.isArray(kv.hashes))
        return serverError(`KV transfer from ${at}, room ${String(room)}: ${reply.status}`);
      if (!sameBlocks(request.hashes, kv.hashes))
        return serverError(`the KV in room ${String(room)} is not this prompt's`);
      return { remoteTokens: request.promptTokens - 1, reportedCached: kv.cachedTokens };
    },
    close: async () => undefined,
  };
}
