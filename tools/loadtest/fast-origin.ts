/**
 * An OpenAI-compatible origin that answers at once: the load test's baseline. The engine
 * simulator (tools/engine) models GPU time, so a load test through it would measure the
 * simulated engine, not the router; this origin does no work beyond parsing the body, so the
 * difference between calling it directly and through the router is the router's cost.
 * Answers `/v1/chat/completions` and `/v1/completions` (JSON, or SSE with a usage chunk when
 * `stream` is true) with vLLM's shapes from tools/engine/openai-format.ts, and `GET /health`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  chunk,
  completion,
  DONE,
  errorBody,
  type Kind,
  usageChunk,
  usageOf,
} from "../engine/openai-format.ts";

export interface FastOrigin {
  url: string;
  close(): Promise<void>;
}

const ANSWER = "ok";
/** Cached tokens reported on every answer, so the router's usage path runs as in production. */
const CACHED_FRACTION = 0.5;

const KINDS: Record<string, Kind> = {
  "/v1/chat/completions": "chat",
  "/v1/completions": "text",
};

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => resolve(Buffer.concat(parts)));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? "").split("?")[0] ?? "";
  if (req.method === "GET" && path === "/health") return sendJson(res, 200, "{}");
  const kind = KINDS[path];
  if (req.method !== "POST" || kind === undefined) {
    return sendJson(res, 404, errorBody("not found", "not_found_error"));
  }
  const bytes = await readBody(req);
  let body: { model?: unknown; stream?: unknown };
  try {
    body = JSON.parse(bytes.toString("utf8"));
  } catch {
    return sendJson(res, 400, errorBody("body is not valid JSON", "invalid_request_error"));
  }
  const promptTokens = Math.ceil(bytes.length / 4);
  const usage = usageOf(promptTokens, 1, Math.floor(promptTokens * CACHED_FRACTION));
  const envelope = { id: "fast-1", created: 0, model: String(body.model ?? "") };
  if (body.stream !== true) {
    return sendJson(res, 200, JSON.stringify(completion(kind, envelope, ANSWER, "stop", usage)));
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.end(
    chunk(kind, envelope, ANSWER, null, true) +
      chunk(kind, envelope, "", "stop", false) +
      usageChunk(kind, envelope, usage) +
      DONE,
  );
}

export function startFastOrigin(port = 0, host = "127.0.0.1"): Promise<FastOrigin> {
  const server = createServer((req, res) => {
    answer(req, res).catch(() => res.destroy());
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const { port: bound } = server.address() as AddressInfo;
      resolve({
        url: `http://${host}:${bound}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
