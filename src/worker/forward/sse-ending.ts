/**
 * How the router ends an SSE response the origin broke or stalled: the way vLLM ends a stream
 * its engine failed (`serving_chat.py`), with one `data:` event holding an OpenAI error object,
 * then `data: [DONE]`. OpenAI's SDKs raise an `APIError` with the event's message and code.
 *
 * Our event must not be glued onto half of one: if the bytes passed so far do not end between
 * events (a blank line, in any of the LF, CRLF or CR line endings the SSE grammar allows), a
 * blank line goes first. That dispatches the half event, which a client then fails to parse as
 * JSON, so a cut event is never taken for a whole one either way. Engines write whole events,
 * so a stream almost always breaks between two, and the ending is then exactly vLLM's.
 *
 * An Anthropic Messages stream ends instead as Anthropic's own streams end on an error
 * (https://platform.claude.com/docs/en/build-with-claude/streaming, "Error events"): one
 * `event: error` whose data is its error shape (errors/anthropic-error.ts), which its SDKs
 * raise; no `[DONE]`, which that API does not have.
 */
import { anthropicErrorBody } from "../errors/anthropic-error.ts";

const CR = 0x0d;
const LF = 0x0a;

export class EventBoundary {
  /** The last bytes seen (a blank line is at most 4 bytes: CRLF CRLF). */
  #tail = new Uint8Array(4);
  #length = 0;
  #seen = false;

  push(bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    this.#seen = true;
    const keep = Math.min(4, bytes.byteLength);
    const next = new Uint8Array(4);
    const carried = Math.min(this.#length, 4 - keep);
    next.set(this.#tail.subarray(this.#length - carried, this.#length), 0);
    next.set(bytes.subarray(bytes.byteLength - keep), carried);
    this.#tail = next;
    this.#length = carried + keep;
  }

  /** True when nothing was passed yet, or the bytes end with a blank line. */
  get atBoundary(): boolean {
    if (!this.#seen) return true;
    let i = this.#length;
    let lineEnds = 0;
    while (i > 0 && lineEnds < 2) {
      const byte = this.#tail[i - 1];
      if (byte === LF) {
        i -= i >= 2 && this.#tail[i - 2] === CR ? 2 : 1;
      } else if (byte === CR) {
        i -= 1;
      } else {
        break;
      }
      lineEnds++;
    }
    return lineEnds === 2;
  }
}

const encoder = new TextEncoder();

/** The closing event of an Anthropic Messages stream: an `api_error` event. */
export function anthropicSseErrorEnding(message: string, atBoundary: boolean): Uint8Array {
  const blank = atBoundary ? "" : "\n\n";
  const data = JSON.stringify(anthropicErrorBody("api_error", message));
  return encoder.encode(`${blank}event: error\ndata: ${data}\n\n`);
}

/** The closing events (an OpenAI-shaped error, then `[DONE]`), after a blank line if needed. */
export function sseErrorEnding(code: string, message: string, atBoundary: boolean): Uint8Array {
  const error = { error: { message, type: "server_error", code, param: null } };
  const blank = atBoundary ? "" : "\n\n";
  return encoder.encode(`${blank}data: ${JSON.stringify(error)}\n\ndata: [DONE]\n\n`);
}
