/**
 * A real HTTP server playing OpenAI-compatible GPU origins (runs in Node, not workerd), so the
 * Worker is tested against real sockets: refused connections, hung requests, broken and stalled
 * streams, redirects. An origin's settings URL chooses its behaviour:
 *   <originBase>/<behaviour>/<name>   e.g. http://127.0.0.1:PORT/ok/a
 * - ok:        answers at once (SSE when `stream` is true, else JSON) with usage including
 *              prompt_tokens_details.cached_tokens = CACHED_TOKENS; on `/v1/messages` (and its
 *              count_tokens) in Anthropic's shape (anthropic-origin.node.ts).
 * - hold:      sends headers and a first chunk, then waits for GET /_release/<name> (or
 *              HOLD_MAX_MS) before finishing like `ok`: keeps requests outstanding on purpose.
 * - fail500, fail429 (Retry-After: 7), hang (never answers), midstream (one whole SSE event in
 *   two writes, then the socket is destroyed), midstream-partial (the same plus half an event).
 * - stall:           sends its headers, then nothing (a body that never starts).
 * - stall-midstream: sends its headers and a first piece of body (a whole SSE event, or half a
 *                    JSON document), then nothing.
 * - redirect:        307 to an internal address (`REDIRECT_LOCATION`).
 * - bytes-per-token-<n>: `ok`, but its chat and completions answers count the body at n bytes
 *                    a token (an engine whose tokenizer is not the edge's 4).
 * Stalled and hung answers end at HOLD_MAX_MS if the router has not closed them by then.
 * - P/D engines (pd-prefill, pd-decode, pd-reject, sgl-prefill, sgl-decode): pd-origin.node.ts.
 * - `ok` also speaks OpenAI's Responses API, with a store per origin: responses-origin.node.ts.
 * Every answer is a pure function of the request, so a test can fetch the origin directly and
 * compare bytes. Each response says what the origin received (x-test-* headers);
 * GET /_hits/<name> counts requests per origin name, GET /_aborted/<name> those whose
 * connection the router closed before the answer ended, GET /_received/<name> lists each
 * request's path, headers and body.
 * The worker tests start it in their global setup (origins.node.ts); the end-to-end tests under
 * wrangler dev start their own.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { anthropicJson, anthropicSse, isMessagesPath } from "./anthropic-origin.node.ts";
import {
  CACHED_TOKENS,
  FORWARDING_HEADERS,
  REDIRECT_LOCATION,
  type ReceivedRequest,
  STEERING_HEADERS,
} from "./fixture.ts";
import { pdOrigin } from "./pd-origin.node.ts";
import { responsesOrigin } from "./responses-origin.node.ts";

const HOLD_MAX_MS = 8000;

function received(req: IncomingMessage, body: Buffer): Record<string, string> {
  const names = [
    "authorization",
    "cookie",
    "x-request-id",
    "x-router-session",
    "x-hop",
    "x-custom",
    "anthropic-version",
    "anthropic-beta",
    ...STEERING_HEADERS,
    ...FORWARDING_HEADERS,
  ];
  const kept = Object.fromEntries(
    names.flatMap((name) => {
      const value = req.headers[name];
      return typeof value === "string" ? [[name, value]] : [];
    }),
  );
  return {
    "x-test-received": JSON.stringify(kept),
    "x-test-body-sha256": createHash("sha256").update(body).digest("hex"),
  };
}

function usage(body: Buffer, cachedTokens = CACHED_TOKENS, bytesPerToken = 4) {
  const promptTokens = Math.ceil(body.length / bytesPerToken);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: 3,
    total_tokens: promptTokens + 3,
    prompt_tokens_details: { cached_tokens: cachedTokens },
  };
}

/** SSE chunks; "é" and "€" are split across writes to catch any re-encoding. */
function sseChunks(
  name: string,
  body: Buffer,
  cachedTokens = CACHED_TOKENS,
  bytesPerToken = 4,
): Buffer[] {
  const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
  const first = event({ id: name, choices: [{ index: 0, delta: { content: "café €" } }] });
  const bytes = Buffer.from(first);
  const cut = bytes.indexOf(Buffer.from("é")) + 1;
  return [
    bytes.subarray(0, cut),
    bytes.subarray(cut),
    Buffer.from(event({ id: name, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })),
    Buffer.from(event({ id: name, choices: [], usage: usage(body, cachedTokens, bytesPerToken) })),
    Buffer.from("data: [DONE]\n\n"),
  ];
}

export interface TestOrigins {
  /** Base URL of the origin server; behaviour is chosen by path (see above). */
  base: string;
  /** An address where nothing listens: connections are refused. */
  refusedBase: string;
  close(): Promise<void>;
}

export async function startTestOrigins(): Promise<TestOrigins> {
  const hits = new Map<string, number>();
  const aborted = new Map<string, number>();
  const receivedBy = new Map<string, ReceivedRequest[]>();
  const pdAnswer = pdOrigin();
  const responsesAnswer = responsesOrigin();
  const holds = new Map<string, (() => void)[]>();
  const sockets = new Set<Socket>();
  const count = (counter: Map<string, number>, name: string) =>
    counter.set(name, (counter.get(name) ?? 0) + 1);

  const release = (name: string) => {
    for (const done of holds.get(name) ?? []) done();
    holds.delete(name);
  };

  const answer = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const [, behaviour = "", name = ""] = (req.url ?? "").split("/");
    if (behaviour === "_release") {
      release(name);
      res.end("released");
      return;
    }
    if (behaviour === "_hits" || behaviour === "_aborted") {
      res.end(String((behaviour === "_hits" ? hits : aborted).get(name) ?? 0));
      return;
    }
    if (behaviour === "_received") {
      res.end(JSON.stringify(receivedBy.get(name) ?? []));
      return;
    }
    count(hits, name);
    const seen = receivedBy.get(name) ?? [];
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter((e): e is [string, string] => typeof e[1] === "string"),
    );
    seen.push({ path: req.url ?? "", headers, body: body.toString("utf8") });
    receivedBy.set(name, seen);
    res.on("close", () => {
      if (!res.writableFinished) count(aborted, name);
    });
    const echo = { ...received(req, body), "x-test-origin": name, "set-cookie": "origin=1" };
    let json: Record<string, unknown> | null = null;
    try {
      json = JSON.parse(body.toString("utf8"));
    } catch {
      // A body that is not JSON gets the JSON answer.
    }
    const stream = json?.stream === true;
    const type = stream ? "text/event-stream" : "application/json";
    const ok = (cachedTokens?: number) => {
      if (!stream) {
        res.writeHead(200, { "content-type": "application/json", ...echo });
        res.end(JSON.stringify({ id: name, choices: [], usage: usage(body, cachedTokens) }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream", ...echo });
      for (const chunk of sseChunks(name, body, cachedTokens)) res.write(chunk);
      res.end();
    };
    if (await pdAnswer(behaviour, name, req, res, { json, body, echo, ok })) return;
    if (behaviour === "ok" && responsesAnswer(name, req, res, { json, body, echo })) return;
    // `bytes-per-token-<n>`: `ok` whose chat answers count the body at n bytes a token.
    const perToken = /^bytes-per-token-(\d+)$/.exec(behaviour);
    const bytesPerToken = perToken ? Number(perToken[1]) : 4;
    switch (perToken ? "ok" : behaviour) {
      case "fail500":
        res.writeHead(500, { "content-type": "application/json", ...echo });
        res.end('{"error":{"message":"engine crashed"}}');
        return;
      case "fail429":
        res.writeHead(429, { "content-type": "application/json", "retry-after": "7", ...echo });
        res.end('{"error":{"message":"queue full"}}');
        return;
      case "redirect":
        res.writeHead(307, {
          "content-type": "application/json",
          location: REDIRECT_LOCATION,
          ...echo,
        });
        res.end('{"moved":true}');
        return;
      case "hang":
        await stalled(res);
        return;
      case "stall":
        res.writeHead(200, { "content-type": type, ...echo });
        res.flushHeaders();
        await stalled(res);
        return;
      case "stall-midstream": {
        res.writeHead(200, { "content-type": type, ...echo });
        const [a, b] = sseChunks(name, body);
        const json = JSON.stringify({ id: name, choices: [], usage: usage(body) });
        res.write(stream ? Buffer.concat([a!, b!]) : json.slice(0, json.length >> 1));
        await stalled(res);
        return;
      }
      case "midstream":
      case "midstream-partial": {
        res.writeHead(200, { "content-type": "text/event-stream", ...echo });
        const [a, b] = sseChunks(name, body);
        const half = Buffer.from(behaviour === "midstream" ? "" : 'data: {"id":"cut');
        res.write(a);
        res.write(Buffer.concat([b!, half]), () => setTimeout(() => res.socket?.destroy(), 50));
        return;
      }
      case "ok":
      case "hold": {
        const path = req.url ?? "";
        if (isMessagesPath(path)) {
          res.writeHead(200, { "content-type": type, ...echo });
          if (!stream) {
            res.end(anthropicJson(path, name, body));
            return;
          }
          // `hold`: the first event (`message_start`, with the input usage), then the rest.
          const [start, ...rest] = anthropicSse(name, body);
          res.write(start);
          if (behaviour === "hold") await held(name);
          for (const chunk of rest) res.write(chunk);
          res.end();
          return;
        }
        if (!stream) {
          if (behaviour === "hold") await held(name);
          res.writeHead(200, { "content-type": "application/json", ...echo });
          const counted = usage(body, CACHED_TOKENS, bytesPerToken);
          res.end(JSON.stringify({ id: name, choices: [], usage: counted }));
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream", ...echo });
        const chunks = sseChunks(name, body, CACHED_TOKENS, bytesPerToken);
        res.write(chunks[0]);
        if (behaviour === "hold") await held(name);
        for (const chunk of chunks.slice(1)) res.write(chunk);
        res.end();
        return;
      }
      default:
        res.writeHead(404).end();
    }
  };

  const held = (name: string) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, HOLD_MAX_MS);
      const list = holds.get(name) ?? [];
      list.push(() => {
        clearTimeout(timer);
        resolve();
      });
      holds.set(name, list);
    });

  /** Send nothing more until the router closes the connection, or end at HOLD_MAX_MS. */
  const stalled = (res: ServerResponse) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        res.end();
        resolve();
      }, HOLD_MAX_MS);
      res.on("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });

  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => void answer(req, res, Buffer.concat(parts)));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const port = await listen(server);

  // A port that was free a moment ago and has nothing listening: connections are refused.
  const spare = createServer();
  const refusedPort = await listen(spare);
  await new Promise<void>((resolve) => spare.close(() => resolve()));

  return {
    base: `http://127.0.0.1:${port}`,
    refusedBase: `http://127.0.0.1:${refusedPort}`,
    async close() {
      for (const name of [...holds.keys()]) release(name);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function listen(server: ReturnType<typeof createServer>): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port));
  });
}
