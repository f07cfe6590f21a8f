/**
 * An OpenAI-compatible engine over the simulator's model: `/v1/chat/completions` and
 * `/v1/completions` (streaming and not, `stream_options.include_usage`), Anthropic's
 * `/v1/messages` and `/v1/messages/count_tokens`, OpenAI's `/v1/responses` (with stored
 * responses: `previous_response_id`, `GET` and `DELETE /v1/responses/{id}`), `/v1/models`,
 * `/health` and `/metrics` (vLLM names). It hashes the canonical prompt of each API exactly as
 * the router does (`promptKey`), so one engine block is one router chunk, and its prefix cache
 * is the model's block LRU: one cache for every API, so a conversation hits the same cached
 * fraction through any of them (a text-only one the same blocks). Each API's answer and usage
 * are written in its own format (`openai-format.ts`, `messages-format.ts`,
 * `responses-format.ts`), and its errors in its own shape. Output is deterministic filler; its
 * length is `max_tokens` (`max_completion_tokens`, `max_output_tokens`).
 * With `pd`, it is one side of a disaggregated prefill/decode pair (pd/pd-role.ts): a prefill
 * engine answers the fields its decode engine needs, a decode engine fetches the prompt's KV
 * from its prefill engine before it decodes. The P/D legs are chat and completions; such an
 * engine answers the other APIs with a 400.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { EngineRequest } from "../../sim/engine/engine.ts";
import type { EngineProfile } from "../../sim/engine/profiles.ts";
import { BYTES_PER_TOKEN, DEFAULT_CHUNK_BYTES } from "../../src/core/chunk-hash.ts";
import { type PromptApi, promptKey } from "../../src/core/prompt/prompt-key.ts";
import { type Parsed, parseCompletion, parseMessages, parseResponses } from "./engine-requests.ts";
import { fillerTokens } from "./filler.ts";
import { LiveEngine, type Progress } from "./live-engine.ts";
import { messagesError, messagesWriter } from "./messages-format.ts";
import { metricsText } from "./metrics-text.ts";
import {
  type AnswerWriter,
  type Counts,
  completionWriter,
  DONE,
  type Envelope,
  errorBody,
  type Kind,
} from "./openai-format.ts";
import { type PdEngineOptions, startPdRole } from "./pd/pd-engine.ts";
import { type PdError, type PdRole, WHOLE } from "./pd/pd-role.ts";
import { ResponseStore } from "./response-store.ts";
import {
  outputMessage,
  type ResponseEnvelope,
  responseNotFound,
  responseObject,
  responsesWriter,
} from "./responses-format.ts";

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
  /** Stored responses kept (least recently used forgotten first); default 1,000. */
  storedResponses?: number;
}

export interface RunningEngine {
  url: string;
  live: LiveEngine;
  server: Server;
  /** The engine's P/D role, whose `endpoint` other engines dial; null for a whole engine. */
  pd: PdRole | null;
  responses: ResponseStore;
  close(): Promise<void>;
}

const BLOCK_TOKENS = DEFAULT_CHUNK_BYTES / BYTES_PER_TOKEN;
const POST_PATHS = new Set([
  "/v1/chat/completions",
  "/v1/completions",
  "/v1/messages",
  "/v1/messages/count_tokens",
  "/v1/responses",
]);
const RESPONSE_PATH = /^\/v1\/responses\/([^/]+)$/;
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

/** One request to generate for: its API, what to hash, how to answer. */
interface Job {
  api: PromptApi;
  parsed: Parsed;
  e: Envelope;
  writer: AnswerWriter;
  /** A 400's body in the API's shape. */
  error(message: string): string;
  /** The whole answer is out (the Responses API stores it). */
  onDone?(text: string, counts: Counts, answer: Record<string, unknown> | null): void;
}

/** An engine-unique id for answers that outlive the request (stored responses). */
const idSalt = Date.now().toString(36);

export async function startEngineServer(options: EngineServerOptions): Promise<RunningEngine> {
  const live = new LiveEngine(options.profile, BLOCK_TOKENS, options.timeScale);
  const model = options.profile.model;
  const host = options.host ?? "127.0.0.1";
  let sequence = 0;
  const store = new ResponseStore(options.storedResponses ?? 1000);
  const pd: PdRole | null = options.pd
    ? await startPdRole(options.pd, {
        id: options.id,
        host,
        blockTokens: BLOCK_TOKENS,
        localBlocks: (hashes) => live.engine.cache.lookup(hashes, hashes.length),
        log: options.log ?? (() => undefined),
      })
    : null;

  /** vLLM names a request after the client's x-request-id (its `remote_request_id` in P/D). */
  function requestName(req: IncomingMessage, seed: number): string {
    const clientId = req.headers["x-request-id"];
    return typeof clientId === "string" && clientId ? clientId : `${options.id}-${seed}`;
  }

  async function generate(job: Job, seed: number, res: ServerResponse): Promise<void> {
    const { parsed: p, e, writer } = job;
    const key = promptKey(p.body, DEFAULT_CHUNK_BYTES, job.api);
    const gone = new AbortController();
    res.on("close", () => gone.abort());
    const blocks = Math.ceil((key.promptTokens + p.maxTokens) / BLOCK_TOKENS);
    if (blocks > live.engine.cache.total) {
      // vLLM rejects such a request up front (longer than max_model_len allows).
      const message = `the request needs ${blocks} KV blocks, more than the engine's ${live.engine.cache.total}`;
      return send(res, 400, job.error(message));
    }
    const chatShaped = job.api === "chat" || job.api === "completions";
    if (pd && !chatShaped) {
      const message = "a disaggregated prefill/decode engine serves chat and completions only";
      return send(res, 400, job.error(message));
    }
    if (p.stream) {
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        connection: "keep-alive",
      });
      const opening = writer.open();
      if (opening) res.write(opening);
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
    const counts = (request: EngineRequest): Counts => ({
      promptTokens: key.promptTokens,
      cachedTokens: plan.reportedCached ?? Math.max(0, request.cachedTokens),
      outputTokens: request.generated,
    });
    const finish = async (request: EngineRequest) => {
      const c = counts(request);
      const extra = plan.finish ? await plan.finish(request) : { fields: {} };
      if (gone.signal.aborted) return;
      if ("error" in extra) {
        fail(res, p.stream, extra.error);
        return;
      }
      if (!p.stream) {
        const answer = { ...writer.whole(text, c), ...extra.fields };
        send(res, 200, JSON.stringify(answer));
        job.onDone?.(text, c, answer);
        return;
      }
      res.end(writer.close(text, c));
      job.onDone?.(text, c, null);
    };
    const progress: Progress = {
      onTokens(count, first) {
        const piece = fillerTokens(seed, emitted, count);
        emitted += count;
        text += piece;
        if (!p.stream || gone.signal.aborted) return;
        res.write(writer.delta(piece, first, counts(request)));
      },
      onDone: (request) => void finish(request),
    };
    const request = live.submit(
      key.chunkHashes,
      key.promptTokens,
      plan.maxTokens ?? p.maxTokens,
      progress,
      { remoteTokens: plan.remoteTokens },
    );
  }

  function completions(kind: Kind, text: string, req: IncomingMessage, res: ServerResponse) {
    const parsed = parseCompletion(text, kind, options.defaultMaxTokens ?? 16);
    const error = (message: string) => errorBody(message, "BadRequestError");
    if (typeof parsed === "string") return send(res, 400, error(parsed));
    const seed = sequence++;
    const e: Envelope = {
      id: `${kind === "chat" ? "chatcmpl" : "cmpl"}-${requestName(req, seed)}`,
      created: Math.floor(Date.now() / 1000),
      model: parsed.body.model,
    };
    const writer = completionWriter(kind, e, parsed.includeUsage);
    const api = kind === "chat" ? "chat" : "completions";
    return generate({ api, parsed, e, writer, error }, seed, res);
  }

  function messages(text: string, req: IncomingMessage, res: ServerResponse) {
    const parsed = parseMessages(text);
    if (typeof parsed === "string") return send(res, 400, messagesError(parsed));
    const seed = sequence++;
    const e: Envelope = {
      id: `msg_${requestName(req, seed)}`,
      created: Math.floor(Date.now() / 1000),
      model: parsed.body.model,
    };
    const writer = messagesWriter(e);
    return generate({ api: "messages", parsed, e, writer, error: messagesError }, seed, res);
  }

  function countTokens(text: string, res: ServerResponse) {
    const parsed = parseMessages(text, true);
    if (typeof parsed === "string") return send(res, 400, messagesError(parsed));
    const { promptTokens } = promptKey(parsed.body, DEFAULT_CHUNK_BYTES, "messages");
    return send(res, 200, JSON.stringify({ input_tokens: promptTokens }));
  }

  /** A follow-up continues the stored conversation: the engine hashes all of it. */
  function responses(text: string, res: ServerResponse) {
    const parsed = parseResponses(text, options.defaultMaxTokens ?? 16);
    const error = (message: string) => errorBody(message, "invalid_request_error");
    if (typeof parsed === "string") return send(res, 400, error(parsed));
    const previous = parsed.previousResponseId;
    const stored = previous === null ? undefined : store.get(previous);
    if (previous !== null && !stored) return send(res, 404, responseNotFound(previous));
    const conversation = [...(stored?.conversation ?? []), ...parsed.input];
    const seed = sequence++;
    const e: ResponseEnvelope = {
      id: `resp_${options.id}-${idSalt}-${seed}`,
      itemId: `msg_${options.id}-${idSalt}-${seed}`,
      created: Math.floor(Date.now() / 1000),
      model: parsed.body.model,
      previousResponseId: previous,
      store: parsed.store,
    };
    const job: Job = {
      api: "responses",
      parsed: { ...parsed, body: { ...parsed.body, input: conversation } },
      e,
      writer: responsesWriter(e),
      error,
      onDone(output, counts, answer) {
        if (!parsed.store) return;
        store.set(e.id, {
          response: answer ?? responseObject(e, output, counts),
          conversation: [...conversation, outputMessage(e.itemId, output, true)],
        });
      },
    };
    return generate(job, seed, res);
  }

  /** `GET` or `DELETE /v1/responses/{id}`. */
  function storedResponse(method: string, id: string, res: ServerResponse) {
    const stored = store.get(id);
    if (!stored) return send(res, 404, responseNotFound(id));
    if (method === "GET") return send(res, 200, JSON.stringify(stored.response));
    store.delete(id);
    return send(res, 200, JSON.stringify({ id, object: "response", deleted: true }));
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
      const stored = RESPONSE_PATH.exec(path ?? "");
      if (stored && (req.method === "GET" || req.method === "DELETE")) {
        return storedResponse(req.method, decodeURIComponent(stored[1] as string), res);
      }
      if (req.method !== "POST" || !(path !== undefined && POST_PATHS.has(path))) {
        return send(res, 404, errorBody(`no route ${req.method} ${path}`, "NotFoundError"));
      }
      const text = await readBody(req);
      if (path === "/v1/chat/completions") await completions("chat", text, req, res);
      else if (path === "/v1/completions") await completions("text", text, req, res);
      else if (path === "/v1/messages") await messages(text, req, res);
      else if (path === "/v1/messages/count_tokens") countTokens(text, res);
      else await responses(text, res);
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
        responses: store,
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
