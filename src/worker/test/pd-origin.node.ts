/**
 * The P/D behaviours of the test origin server (origin-server.node.ts), by URL path
 * `<originBase>/<behaviour>/<name>`, answering with the fields the real engines answer:
 * - pd-prefill: a vLLM NixlConnector prefill engine: given `kv_transfer_params`, JSON with
 *   usage (cached_tokens = PD_PREFILL_CACHED) and `kv_transfer_params` (remote_request_id from
 *   x-request-id, remote_host `localhost` as vLLM answers by default); without them it serves
 *   the request whole, like `ok`, as vLLM does.
 * - pd-decode: a vLLM decode engine: answers like `ok`, but with `kv_transfer_params` in the
 *   body reports cached_tokens = prompt_tokens - 1, as vLLM counts KV it was sent.
 * - pd-reject: a prefill engine refusing the request (400).
 * - sgl-prefill / sgl-decode: SGLang's pair, meeting on `bootstrap_room`: each waits (up to
 *   MEET_MS) for the other leg of its room to arrive, so legs sent one after the other never
 *   meet. The prefill answers JSON with usage (PD_PREFILL_CACHED); the decode answers like `ok`
 *   with the prefill's cached_tokens, as SGLang's decode copies it. Without a room, sgl-decode
 *   answers like `ok` (served alone). A leg that never meets answers 500.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { PD_PREFILL_CACHED } from "./fixture.ts";

const MEET_MS = 5000;

export interface PdAnswerContext {
  /** The parsed body, or null when it is not JSON. */
  readonly json: Record<string, unknown> | null;
  readonly body: Buffer;
  /** Headers saying what the origin received (x-test-*). */
  readonly echo: Record<string, string>;
  /** Answer like `ok`, with these cached tokens (CACHED_TOKENS if not given). */
  ok(cachedTokens?: number): void;
}

interface Room {
  legs: Set<string>;
  waiters: (() => void)[];
}

export function pdOrigin() {
  const rooms = new Map<number, Room>();

  /** Wait until the other leg of `room` arrives (or MEET_MS, or the caller hangs up). */
  const meet = (room: number, leg: string, res: ServerResponse) =>
    new Promise<boolean>((resolve) => {
      const r = rooms.get(room) ?? { legs: new Set<string>(), waiters: [] };
      rooms.set(room, r);
      r.legs.add(leg);
      for (const wake of r.waiters.splice(0)) wake();
      if (r.legs.size === 2) return resolve(true);
      const timer = setTimeout(() => resolve(false), MEET_MS);
      res.on("close", () => {
        clearTimeout(timer);
        resolve(false);
      });
      r.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });

  const json = (
    res: ServerResponse,
    status: number,
    value: unknown,
    echo: Record<string, string>,
  ) => {
    res.writeHead(status, { "content-type": "application/json", ...echo });
    res.end(JSON.stringify(value));
  };

  const promptTokens = (body: Buffer) => Math.ceil(body.length / 4);
  const prefillUsage = (body: Buffer) => ({
    prompt_tokens: promptTokens(body),
    completion_tokens: 1,
    total_tokens: promptTokens(body) + 1,
    prompt_tokens_details: { cached_tokens: PD_PREFILL_CACHED },
  });

  /** Answers `behaviour` if it is a P/D one; false otherwise. */
  return async function pdAnswer(
    behaviour: string,
    name: string,
    req: IncomingMessage,
    res: ServerResponse,
    c: PdAnswerContext,
  ): Promise<boolean> {
    const room = c.json?.bootstrap_room;
    switch (behaviour) {
      case "pd-prefill":
        if (!c.json?.kv_transfer_params) {
          c.ok();
          return true;
        }
        json(
          res,
          200,
          {
            id: name,
            choices: [],
            usage: prefillUsage(c.body),
            kv_transfer_params: {
              do_remote_prefill: true,
              do_remote_decode: false,
              remote_block_ids: [1, 2, 3],
              remote_engine_id: `engine-${name}`,
              remote_request_id: `chatcmpl-${String(req.headers["x-request-id"])}`,
              remote_host: "localhost",
              remote_port: 5600,
              tp_size: 1,
            },
          },
          c.echo,
        );
        return true;
      case "pd-decode":
        c.ok(c.json?.kv_transfer_params ? promptTokens(c.body) - 1 : undefined);
        return true;
      case "pd-reject":
        json(res, 400, { error: { message: "max_tokens is too large", code: 400 } }, c.echo);
        return true;
      case "sgl-prefill":
        if (typeof room !== "number" || !(await meet(room, "prefill", res)))
          json(res, 500, { error: { message: "no decode joined the room" } }, c.echo);
        else json(res, 200, { id: name, choices: [], usage: prefillUsage(c.body) }, c.echo);
        return true;
      case "sgl-decode":
        if (typeof room !== "number") c.ok();
        else if (await meet(room, "decode", res)) c.ok(PD_PREFILL_CACHED);
        else if (!res.destroyed) json(res, 500, { error: { message: "no prefill" } }, c.echo);
        return true;
      default:
        return false;
    }
  };
}
