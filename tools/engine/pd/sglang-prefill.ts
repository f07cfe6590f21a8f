/**
 * An SGLang prefill engine (`--disaggregation-mode prefill`), as the router drives it
 * (python/sglang/srt/disaggregation/prefill.py; the router's side is mini_lb.py): a request
 * with a `bootstrap_room` is prefilled and samples its first token only (SGLang's prefill
 * server ends a request there); its KV goes into the room at this engine's bootstrap server
 * (`--disaggregation-bootstrap-port`, 8998 by default), and the answer waits until a decode
 * engine has taken it, as SGLang's prefill waits for the transfer to finish. No decode within
 * the bootstrap timeout fails the request (SGLang aborts it). `bootstrap_host` and
 * `bootstrap_port` name this engine; only the decode engine reads them. A request without a
 * room is served whole.
 */
import { type PdPlan, type PdRole, serverError, WHOLE } from "./pd-role.ts";
import { Rooms } from "./sglang-rooms.ts";
import { startSideServer } from "./side-server.ts";

export interface SglangPrefillOptions {
  /** Where the bootstrap server listens. */
  readonly host: string;
  readonly bootstrapPort: number;
  readonly bootstrapTimeoutMs: number;
}

export async function startSglangPrefill(options: SglangPrefillOptions): Promise<PdRole> {
  const rooms = new Rooms(options.bootstrapTimeoutMs);
  const bootstrap = await startSideServer(
    options.host,
    options.bootstrapPort,
    async (method, path, _body, signal) => {
      const room = /^\/room\/(\d+)$/.exec(path)?.[1];
      if (method !== "GET" || room === undefined)
        return { status: 404, body: { error: `no route ${method} ${path}` } };
      const kv = await rooms.take(Number(room), signal);
      return kv
        ? { status: 200, body: kv }
        : { status: 504, body: { error: `no prefill put room ${room} in time` } };
    },
  );
  return {
    endpoint: `${bootstrap.host}:${bootstrap.port}`,
    async admit(request): Promise<PdPlan> {
      const room = request.body.bootstrap_room;
      if (typeof room !== "number" || !Number.isSafeInteger(room) || room < 0) return WHOLE;
      return {
        remoteTokens: 0,
        maxTokens: 1,
        finish: async (engine) => {
          const taken = await rooms.put(room, {
            hashes: Array.from(request.hashes),
            promptTokens: request.promptTokens,
            cachedTokens: Math.max(0, engine.cachedTokens),
          });
          if (taken) return { fields: {} };
          const waited = options.bootstrapTimeoutMs;
          return serverError(
            `KV transfer: no decode engine took bootstrap_room ${room} in ${waited} ms`,
          );
        },
      };
    },
    close: () => bootstrap.close(),
  };
}
