/**
 * The OpenAI Responses API of the `ok` test origin (origin-server.node.ts), as vLLM serves it:
 * `POST /v1/responses` answers JSON or, with `stream`, the SSE events `response.created`,
 * `response.output_text.delta` and `response.completed` (usage with
 * `input_tokens_details.cached_tokens` = CACHED_TOKENS), and keeps the response unless `store`
 * is false; a follow-up's `input_tokens` count the stored conversation (its previous response's
 * `total_tokens`) beside its own body. A `previous_response_id` this origin did not store is
 * vLLM's 404. `GET /v1/responses/{id}` (and `/input_items`) and `DELETE` answer from this
 * origin's store.
 * Each origin name has its own store, so a follow-up sent to the wrong origin fails.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { CACHED_TOKENS } from "./fixture.ts";

export interface ResponsesAnswerContext {
  readonly json: Record<string, unknown> | null;
  readonly body: Buffer;
  readonly echo: Record<string, string>;
}

interface Usage {
  readonly total_tokens: number;
}

const PATH = /\/v1\/responses(?:\/([^/?]+))?(\/input_items)?/;

export function responsesOrigin() {
  const stores = new Map<string, Map<string, Record<string, unknown>>>();
  let made = 0;

  const notFound = (res: ServerResponse, id: string, echo: Record<string, string>) => {
    res.writeHead(404, { "content-type": "application/json", ...echo });
    res.end(
      JSON.stringify({
        error: {
          message: `Response with id '${id}' not found.`,
          type: "invalid_request_error",
          param: "response_id",
          code: 404,
        },
      }),
    );
  };

  return function answer(
    name: string,
    req: IncomingMessage,
    res: ServerResponse,
    { json, body, echo }: ResponsesAnswerContext,
  ): boolean {
    const path = PATH.exec(req.url ?? "");
    if (!path) return false;
    const store = stores.get(name) ?? new Map<string, Record<string, unknown>>();
    stores.set(name, store);
    const [, id, items] = path;
    if (id !== undefined) {
      const stored = store.get(id);
      if (!stored) {
        notFound(res, id, echo);
        return true;
      }
      res.writeHead(200, { "content-type": "application/json", ...echo });
      if (req.method === "DELETE") {
        store.delete(id);
        res.end(JSON.stringify({ id, object: "response", deleted: true }));
      } else if (items) {
        res.end(JSON.stringify({ object: "list", data: [], has_more: false }));
      } else {
        res.end(JSON.stringify(stored));
      }
      return true;
    }
    const previous = json?.previous_response_id;
    if (typeof previous === "string" && !store.has(previous)) {
      notFound(res, previous, echo);
      return true;
    }
    // As vLLM counts it: a follow-up's prompt is the stored conversation, then its new items.
    const before = typeof previous === "string" ? (store.get(previous)?.usage as Usage) : null;
    const inputTokens = Math.ceil(body.length / 4) + (before?.total_tokens ?? 0);
    const response = {
      id: `resp_${name}_${(made++).toString(36)}_${Math.random().toString(36).slice(2, 8)}`,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: "completed",
      model: json?.model,
      output: [
        {
          type: "message",
          id: `msg_${made}`,
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: `answered by ${name}`, annotations: [] }],
        },
      ],
      previous_response_id: previous ?? null,
      store: json?.store !== false,
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: CACHED_TOKENS },
        output_tokens: 3,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: inputTokens + 3,
      },
    };
    if (json?.store !== false) store.set(response.id, response);
    if (json?.stream !== true) {
      res.writeHead(200, { "content-type": "application/json", ...echo });
      res.end(JSON.stringify(response));
      return true;
    }
    res.writeHead(200, { "content-type": "text/event-stream", ...echo });
    const event = (type: string, data: Record<string, unknown>, n: number) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n, ...data })}\n\n`;
    const started = { ...response, status: "in_progress", output: [], usage: null };
    res.write(event("response.created", { response: started }, 0));
    res.write(
      event(
        "response.output_text.delta",
        { item_id: `msg_${made}`, output_index: 0, content_index: 0, delta: "answered" },
        1,
      ),
    );
    res.end(event("response.completed", { response }, 2));
    return true;
  };
}
