/**
 * An OpenAI-compatible engine over the simulator's model: `/v1/chat/completions` and
 * `/v1/completions` (streaming and not, `stream_options.include_usage`), `/v1/models`,
 * `/health` and `/metrics` (vLLM names). It hashes the canonical prompt exactly as the router
 * does, so one engine block is one router chunk, and its prefix cache is the model's block LRU.
 * Output is deterministic filler; its length is `max_tokens` (or `max_completion_tokens`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { EngineProfile } from "../../sim/engine/profiles.ts";
import { BYTES_PER_TOKEN, DEFAULT_CHUNK_BYTES } from "../../src/core/chunk-hash.ts";
import { promptKey } from "../../src/core/prompt/prompt-key.ts";
import { fillerTokens } from "./filler.ts";
import { LiveEngine } from "./live-engine.ts";
import { metricsText } from "./metrics-text.ts";
import {
  chunk,
  completion,
  DONE,
  type Envelope,
  errorBody,
  type Kind,
  usageChunk,
  usageOf,
} from "./openai-format.ts";

export interface EngineServerOptions {
  id: string;
  port: number;
  host?: string;
  profile: EngineProfile;
  timeScale: number;
  /** Default output length when a request sets no max_tokens. */
  defaultMaxTokens?: number;
}

export interface RunningEngine {
  url: string;
  live: LiveEngine;
  server: Server;
  close(): Promise<void>;
}

const BLOCK_TOKENS = DEFAULT_CHUNK_BYTES / BYTES_PER_TOKEN;
const MAX_BODY = 64 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) reject(new Error("body too large"));
      else parts.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function send(res: ServerResponse, status: number, body: string, type = "application/json"): void {
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

interface Parsed {
  body: { model: string; [field: string]: unknown };
  maxTokens: number;
  stream: boolean;
  includeUsage: boolean;
}

function parse(text: string, kind: Kind, defaultMaxTokens: number): Parsed | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "body is not valid JSON";
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return "body must be a JSON object";
  const b = body as Record<string, unknown>;
  if (typeof b.model !== "string") return "model is required";
  if (kind === "chat" && (!Array.isArray(b.messages) || b.messages.length === 0))
    return "messages must be a non-empty array";
  if (kind === "text" && b.prompt === undefined) return "prompt is required";
  const max = b.max_completion_tokens ?? b.max_tokens ?? defaultMaxTokens;
  if (typeof max !== "number" || !Number.isInteger(max) || max < 1)
    return "max_tokens must be a positive integer";
  const options = b.stream_options as { include_usage?: unknown } | undefined;
  return {
    body: b as Parsed["body"],
    maxTokens: max,
    stream: b.stream === true,
    includeUsage: options?.include_usage === true,
  };
}

export function startEngineServer(options: EngineServerOptions): Promise<RunningEngine> {
  const live = new LiveEngine(options.profile, BLOCK_TOKENS, options.timeScale);
  const model = options.profile.model;
  let sequence = 0;

  function generate(kind: Kind, p: Parsed, res: ServerResponse): void {
    const key = promptKey(p.body);
    const seed = sequence++;
    const e: Envelope = {
      id: `${kind === "chat" ? "chatcmpl" : "cmpl"}-${options.id}-${seed}`,
      created: Math.floor(Date.now() / 1000),
      model: p.body.model,
    };
    let text = "";
    let emitted = 0;
    let gone = false;
    res.on("close", () => {
      gone = true;
    });
    try {
      live.submit(key.chunkHashes, key.promptTokens, p.maxTokens, {
        onTokens(count, first) {
          const piece = fillerTokens(seed, emitted, count);
          emitted += count;
          if (!p.stream) {
            text += piece;
            return;
          }
          if (gone) return;
          if (first) res.write(chunk(kind, e, "", null, true));
          res.write(chunk(kind, e, piece, null, false));
        },
        onDone(request) {
          const usage = usageOf(
            key.promptTokens,
            request.generated,
            Math.max(0, request.cachedTokens),
          );
          if (gone) return;
          if (!p.stream) {
            send(res, 200, JSON.stringify(completion(kind, e, text, "length", usage)));
            return;
          }
          res.write(chunk(kind, e, "", "length", false));
          if (p.includeUsage) res.write(usageChunk(kind, e, usage));
          res.end(DONE);
        },
      });
    } catch (error) {
      send(
        res,
        400,
        errorBody(error instanceof Error ? error.message : String(error), "BadRequestError"),
      );
      return;
    }
    if (p.stream) {
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
      res.flushHeaders();
    }
  }

  const server = createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    try {
      if (req.method === "GET" && path === "/health") return send(res, 200, "", "text/plain");
      if (req.method === "GET" && path === "/metrics") {
        return send(res, 200, metricsText(live, model, BLOCK_TOKENS), "text/plain; version=0.0.4");
      }
      if (req.method === "GET" && path === "/v1/models") {
        return send(
          res,
          200,
          JSON.stringify({
            object: "list",
            data: [{ id: model, object: "model", owned_by: "llm-edge-router-sim" }],
          }),
        );
      }
      const kind: Kind | null =
        path === "/v1/chat/completions" ? "chat" : path === "/v1/completions" ? "text" : null;
      if (req.method !== "POST" || kind === null) {
        return send(res, 404, errorBody(`no route ${req.method} ${path}`, "NotFoundError"));
      }
      const parsed = parse(await readBody(req), kind, options.defaultMaxTokens ?? 16);
      if (typeof parsed === "string") return send(res, 400, errorBody(parsed, "BadRequestError"));
      generate(kind, parsed, res);
    } catch (error) {
      send(
        res,
        500,
        errorBody(error instanceof Error ? error.message : String(error), "InternalServerError"),
      );
    }
  });

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${options.host ?? "127.0.0.1"}:${port}`,
        live,
        server,
        close: () =>
          new Promise<void>((r) => {
            live.close();
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}
