/**
 * OpenAI Responses answers as the engines write them (`POST /v1/responses`): the response
 * object, or its SSE events (`response.created`, `response.in_progress`,
 * `response.output_item.added`, `response.content_part.added`, `response.output_text.delta`...,
 * `response.output_text.done`, `response.content_part.done`, `response.output_item.done`,
 * `response.completed` holding the final object), each with its `sequence_number`. Usage as
 * OpenAI and llama.cpp's server (observed) report it: `input_tokens` is the whole prompt,
 * `input_tokens_details.cached_tokens` its cached part. Errors are OpenAI's shape
 * (`openai-format.ts`); an unknown response id is vLLM's 404.
 */
import type { AnswerWriter, Counts, Envelope } from "./openai-format.ts";

export interface ResponseEnvelope extends Envelope {
  /** The id of the one output message. */
  itemId: string;
  previousResponseId: string | null;
  store: boolean;
}

/** The output message: `text` so far, done or still coming. */
export function outputMessage(id: string, text: string, done: boolean) {
  return {
    id,
    type: "message",
    status: done ? "completed" : "in_progress",
    role: "assistant",
    content: done ? [{ type: "output_text", text, annotations: [] }] : [],
  };
}

/** The response object; `counts` once complete (then with its output and usage). */
export function responseObject(e: ResponseEnvelope, text: string, counts: Counts | null) {
  return {
    id: e.id,
    object: "response",
    created_at: e.created,
    status: counts ? "completed" : "in_progress",
    model: e.model,
    output: counts ? [outputMessage(e.itemId, text, true)] : [],
    previous_response_id: e.previousResponseId,
    store: e.store,
    usage: counts
      ? {
          input_tokens: counts.promptTokens,
          input_tokens_details: { cached_tokens: counts.cachedTokens },
          output_tokens: counts.outputTokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: counts.promptTokens + counts.outputTokens,
        }
      : null,
  };
}

export function responsesWriter(e: ResponseEnvelope): AnswerWriter {
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`;
  const at = { item_id: e.itemId, output_index: 0, content_index: 0 };
  return {
    open: () => {
      const response = responseObject(e, "", null);
      return event("response.created", { response }) + event("response.in_progress", { response });
    },
    delta: (piece, first) =>
      (first
        ? event("response.output_item.added", {
            output_index: 0,
            item: outputMessage(e.itemId, "", false),
          }) +
          event("response.content_part.added", {
            ...at,
            part: { type: "output_text", text: "", annotations: [] },
          })
        : "") + event("response.output_text.delta", { ...at, delta: piece }),
    close: (text, c) =>
      event("response.output_text.done", { ...at, text }) +
      event("response.content_part.done", {
        ...at,
        part: { type: "output_text", text, annotations: [] },
      }) +
      event("response.output_item.done", {
        output_index: 0,
        item: outputMessage(e.itemId, text, true),
      }) +
      event("response.completed", { response: responseObject(e, text, c) }),
    whole: (text, c) => responseObject(e, text, c),
  };
}

/** vLLM's answer to an unknown response id (`_make_not_found_error`), 404. */
export function responseNotFound(id: string): string {
  return JSON.stringify({
    error: {
      message: `Response with id '${id}' not found.`,
      type: "invalid_request_error",
      param: "response_id",
      code: 404,
    },
  });
}
