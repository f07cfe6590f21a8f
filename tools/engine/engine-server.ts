/**
 * An OpenAI-compatible engine over the simulator's model: `/v1/chat/completions` and
 * `/v1/completions` (streaming and not, `stream_options.include_usage`), `/v1/models`,
 * `/health` and `/metrics` (vLLM names). It hashes the canonical prompt exactly as the router
 * does, so one engine block is one router chunk, and its prefix cache is the model's block LRU.
 * Output is deterministic filler; its length is `max_tokens` (or `max_completion_tokens`).
 * With `pd`, it is one side of a disaggregated prefill/decode pair (pd/pd-role.ts): a prefill
 * engine answers the fields its decode engine needs, a decode engine fetches the prompt's KV
 * from its prefill engine before it decodes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { EngineRequest } from "../../sim/engine/engine.ts";
import type { EngineProfile } from "../../sim/engine/profiles.ts";
import { BYTES_PER_TOKEN, DEFAULT_CHUNK_BYTES } from "../../src/core/chunk-hash.ts";
import { promptKey } from "../../src/core/prompt/prompt-key.ts";
import { fillerTokens } from "./filler.ts";
import { LiveEngine, type Progress } from "./live-engine.ts";
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
import { type PdEngineOptions, startPdRole } from "./pd/pd-engine.ts";
import { type PdError, type PdRole, WHOLE } from "./pd/pd-role.ts";

export interface EngineServerOptions {
  id: string;
  port: number;
  host?: string;
  profile: EngineProfile;
  timeScale: number;
  /** Default output length when a request sets no max_tokens. */
  defaultMaxTokens?: number;
  /** Its side of a disaggregated prefill/decode pair (pd/pd-role.ts), if any. */
  pd?: PdEngineOptions;
  /** Where P/D notices go ("invalid KVTransferParams", transfers recomputed). */
  log?: (line: string) => void;
}

export interface RunningEngine {
  url: string;
  live: LiveEngine;
  server: Server;
  /** The engine's P/D role, whose `endpoint` other engines dial; null for a whole engine. */
  pd: PdRole | null;
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

export async function startEngineServer(options: EngineServerOptions): Promise<RunningEngine> {
  const live = new LiveEngine(options.profile, BLOCK_TOKENS, options.timeScale);
  const model = options.profile.model;
  const host = options.host ?? "127.0.0.1";
  let sequence = 0;
  const pd: PdRole | null = options.pd
    ? await startPdRole(options.pd, {
        id: options.id,
        host,
        blockTokens: BLOCK_TOKENS,
        localBlocks: (hashes) => live.engine.cache.lookup(hashes, hashes.length),
        log: options.log ?? (() => undefined),
      })
    : null;

  async function generate(
    kind: Kind,
    p: Parsed,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const key = promptKey(p.body);
    const seed = sequence++;
    // vLLM names a request after the client's x-request-id (its `remote_request_id` in P/D).
    const clientId = req.headers["x-request-id"];
    const base = typeof clientId === "string" && clientId ? clientId : `${options.id}-${seed}`;
    const e: Envelope = {
      id: `${kind === "chat" ? "chatcmpl" : "cmpl"}-${base}`,
      created: Math.floor(Date.now() / 1000),
      model: p.body.model,
    };
    const gone = new AbortController();
    res.on("close", () => gone.abort());
    const blocks = Math.ceil((key.promptTokens + p.maxTokens) / BLOCK_TOKENS);
    if (blocks > live.engine.cache.total) {
      // vLLM rejects such a request up front (longer than max_model_len allows).
      const message = `the request needs ${blocks} KV blocks, more than the engine's ${live.engine.cache.total}`;
      return send(res, 400, errorBody(message, "BadRequestError"));
    }
    if (p.stream) {
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
      res.flushHeaders();
    }
    const plan = pd
      ? await pd.admit({
          body: p.body,
          hashes: key.chunkHashes,
          promptTokens: key.promptTokens,
          requestId: e.id,
          signal: gone.signal,
        })
      : WHOLE;
    if (gone.signal.aborted) return;
    if ("error" in plan) {
      fail(res, p.stream, plan.error);
      return;
    }
    let text = "";
    let emitted = 0;
    const finish = async (request: EngineRequest) => {
      const cached = plan.reportedCached ?? Math.max(0, request.cachedTokens);
      const usage = usageOf(key.promptTokens, request.generated, cached);
      const extra = plan.finish ? await plan.finish(request) : { fields: {} };
      if (gone.signal.aborted) return;
      if ("error" in extra) {
        fail(res, p.stream, extra.error);
        return;
      }
      if (!p.stream) {
        const answer = completion(kind, e, text, "length", usage) as Record<string, unknown>;
        return send(res, 200, JSON.stringify({ ...answer, ...extra.fields }));
      }
      res.write(chunk(kind, e, "", "length", false));
      if (p.includeUsage) res.write(usageChunk(kind, e, usage));
      res.end(DONE);
    };
    const progress: Progress = {
      onTokens(count, first) {
        const piece = fillerTokens(seed, emitted, count);
        emitted += count;
        if (!p.stream) {
          text += piece;
          return;
        }
        if (gone.signal.aborted) return;
        if (first) res.write(chunk(kind, e, "", null, true));
        res.write(chunk(kind, e, piece, null, false));
      },
      onDone: (request) => void finish(request),
    };
    live.submit(key.chunkHashes, key.promptTokens, plan.maxTokens ?? p.maxTokens, progress, {
      remoteTokens: plan.remoteTokens,
    });
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
      await generate(kind, parsed, req, res);
    } catch (error) {
      send(
        res,
        500,
        errorBody(error instanceof Error ? error.message : String(error), "InternalServerError"),
      );
    }
  });

  return new Promise<RunningEngine>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${host}:${port}`,
        live,
        server,
        pd,
        close: async () => {
          live.close();
          server.closeAllConnections();
          await new Promise<void>((r) => server.close(() => r()));
          await pd?.close();
        },
      });
    });
  });
}

/** An error instead of an answer: a JSON error, or on a stream already begun, an error event. */
function fail(res: ServerResponse, stream: boolean, error: PdError): void {
  if (!stream) {
    send(res, error.status, errorBody(error.message, error.type));
    return;
  }
  const event = {
    error: { message: error.message, type: error.type, param: null, code: error.status },
  };
  res.write(`data: ${JSON.stringify(event)}\n\n`);
  res.end(DONE);
}
