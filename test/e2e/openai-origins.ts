/**
 * Local OpenAI-compatible "GPU origins" for the end-to-end tests: one HTTP server, one origin per
 * first path segment (`http://127.0.0.1:PORT/<name>` + `/v1/chat/completions`). Each origin keeps
 * a toy prefix cache (hashes of the request body's leading 256-byte chunks, like vLLM's block
 * hashes), so `usage.prompt_tokens_details.cached_tokens` is what an engine that saw the same
 * traffic would report: the router's cache locality shows up as real hit rates. Answers stream
 * (SSE, usage in the last chunk) or come as JSON, after a short delay so time to first byte is
 * not zero.
 */
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";

const CHUNK_BYTES = 256;
const TOKENS_PER_CHUNK = CHUNK_BYTES / 4;
/** A cache this big is never full in a test; past it, it starts again (an engine restart). */
const MAX_CACHED_CHUNKS = 100_000;

export interface OpenAiOrigins {
  readonly base: string;
  /** Settings URL of origin `name`. */
  url(name: string): string;
  /** Requests each origin has answered. */
  readonly served: Map<string, number>;
  close(): Promise<void>;
}

/** Leading chunks of `body` already in `cache`; then caches all of them. */
function prefill(cache: Set<string>, body: Buffer): number {
  if (cache.size > MAX_CACHED_CHUNKS) cache.clear();
  const hash = createHash("sha256");
  let hit = 0;
  let missed = false;
  for (let at = 0; at + CHUNK_BYTES <= body.length; at += CHUNK_BYTES) {
    hash.update(body.subarray(at, at + CHUNK_BYTES));
    const key = hash.copy().digest("hex");
    if (!missed && cache.has(key)) hit++;
    else missed = true;
    cache.add(key);
  }
  return hit * TOKENS_PER_CHUNK;
}

export async function startOpenAiOrigins(delayMs = 15): Promise<OpenAiOrigins> {
  const caches = new Map<string, Set<string>>();
  const served = new Map<string, number>();
  const sockets = new Set<Socket>();

  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const name = (req.url ?? "").split("/")[1] ?? "";
      const body = Buffer.concat(parts);
      let stream = false;
      try {
        stream = JSON.parse(body.toString("utf8")).stream === true;
      } catch {
        res.writeHead(400, { "content-type": "application/json" });
        res.end('{"error":{"message":"body is not JSON"}}');
        return;
      }
      const cache = caches.get(name) ?? new Set<string>();
      caches.set(name, cache);
      const promptTokens = Math.ceil(body.length / 4);
      const usage = {
        prompt_tokens: promptTokens,
        completion_tokens: 4,
        total_tokens: promptTokens + 4,
        prompt_tokens_details: { cached_tokens: Math.min(prefill(cache, body), promptTokens) },
      };
      served.set(name, (served.get(name) ?? 0) + 1);
      // Uncached prompt tokens cost a little prefill time, so cache hits answer sooner.
      const wait =
        delayMs + Math.round((promptTokens - usage.prompt_tokens_details.cached_tokens) / 100);
      setTimeout(() => {
        const id = `chatcmpl-${name}`;
        if (!stream) {
          res.writeHead(200, { "content-type": "application/json" });
          const message = { role: "assistant", content: "four words of answer" };
          res.end(
            JSON.stringify({
              id,
              object: "chat.completion",
              choices: [{ index: 0, message }],
              usage,
            }),
          );
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream" });
        const event = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
        for (const word of ["four ", "words ", "of ", "answer"]) {
          res.write(event({ id, choices: [{ index: 0, delta: { content: word } }] }));
        }
        res.write(event({ id, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
        res.write(event({ id, choices: [], usage }));
        res.end("data: [DONE]\n\n");
      }, wait);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const port = await new Promise<number>((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port));
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    url: (name) => `${base}/${name}`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
