/**
 * Global setup of the worker tests (runs in Node, not workerd): a real HTTP server playing
 * OpenAI-compatible GPU origins, so the Worker is tested against real sockets: refused
 * connections, hung requests, broken streams. An origin's settings URL chooses its behaviour:
 *   <originBase>/<behaviour>/<name>   e.g. http://127.0.0.1:PORT/ok/a
 * - ok:        answers at once (SSE when `stream` is true, else JSON) with usage including
 *              prompt_tokens_details.cached_tokens = CACHED_TOKENS.
 * - hold:      sends headers and a first chunk, then waits for GET /_release/<name> (or
 *              HOLD_MAX_MS) before finishing like `ok`: keeps requests outstanding on purpose.
 * - fail500, fail429 (Retry-After: 7), hang (never answers), midstream (two chunks, then
 *   the socket is destroyed).
 * Every answer is a pure function of the request, so a test can fetch the origin directly and
 * compare bytes. Each response says what the origin received (x-test-* headers), and
 * GET /_hits/<name> counts requests per origin name.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { TestProject } from "vitest/node";
import { CACHED_TOKENS } from "./fixture.ts";

const HOLD_MAX_MS = 8000;

function received(req: IncomingMessage, body: Buffer): Record<string, string> {
  const seen: Record<string, string | undefined> = {
    authorization: req.headers.authorization,
    cookie: req.headers.cookie,
    "x-request-id": req.headers["x-request-id"] as string | undefined,
    "x-router-session": req.headers["x-router-session"] as string | undefined,
    "x-hop": req.headers["x-hop"] as string | undefined,
    "x-custom": req.headers["x-custom"] as string | undefined,
  };
  const kept = Object.fromEntries(Object.entries(seen).filter(([, v]) => v !== undefined));
  return {
    "x-test-received": JSON.stringify(kept),
    "x-test-body-sha256": createHash("sha256").update(body).digest("hex"),
  };
}

function usage(body: Buffer) {
  const promptTokens = Math.ceil(body.length / 4);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: 3,
    total_tokens: promptTokens + 3,
    prompt_tokens_details: { cached_tokens: CACHED_TOKENS },
  };
}

/** SSE chunks; "é" and "€" are split across writes to catch any re-encoding. */
function sseChunks(name: string, body: Buffer): Buffer[] {
  const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
  const first = event({ id: name, choices: [{ index: 0, delta: { content: "café €" } }] });
  const bytes = Buffer.from(first);
  const cut = bytes.indexOf(Buffer.from("é")) + 1;
  return [
    bytes.subarray(0, cut),
    bytes.subarray(cut),
    Buffer.from(event({ id: name, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })),
    Buffer.from(event({ id: name, choices: [], usage: usage(body) })),
    Buffer.from("data: [DONE]\n\n"),
  ];
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const hits = new Map<string, number>();
  const holds = new Map<string, (() => void)[]>();
  const sockets = new Set<Socket>();

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
    if (behaviour === "_hits") {
      res.end(String(hits.get(name) ?? 0));
      return;
    }
    hits.set(name, (hits.get(name) ?? 0) + 1);
    const echo = { ...received(req, body), "x-test-origin": name, "set-cookie": "origin=1" };
    let stream = false;
    try {
      stream = JSON.parse(body.toString("utf8")).stream === true;
    } catch {
      // A body that is not JSON gets the JSON answer.
    }
    switch (behaviour) {
      case "fail500":
        res.writeHead(500, { "content-type": "application/json", ...echo });
        res.end('{"error":{"message":"engine crashed"}}');
        return;
      case "fail429":
        res.writeHead(429, { "content-type": "application/json", "retry-after": "7", ...echo });
        res.end('{"error":{"message":"queue full"}}');
        return;
      case "hang":
        return;
      case "midstream": {
        res.writeHead(200, { "content-type": "text/event-stream", ...echo });
        const [a, b] = sseChunks(name, body);
        res.write(a);
        res.write(b, () => setTimeout(() => res.socket?.destroy(), 50));
        return;
      }
      case "ok":
      case "hold": {
        if (!stream) {
          if (behaviour === "hold") await held(name);
          res.writeHead(200, { "content-type": "application/json", ...echo });
          res.end(JSON.stringify({ id: name, choices: [], usage: usage(body) }));
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream", ...echo });
        const chunks = sseChunks(name, body);
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

  project.provide("originBase", `http://127.0.0.1:${port}`);
  project.provide("refusedBase", `http://127.0.0.1:${refusedPort}`);

  return async () => {
    for (const name of [...holds.keys()]) release(name);
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

function listen(server: ReturnType<typeof createServer>): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port));
  });
}
