/**
 * The origin's response body on its way to the client, observed and never changed: every
 * chunk is passed on as the same bytes, and a `UsageScanner` reads the final usage as it goes.
 * `ended` resolves once, with how the body ended:
 * - "end":          the origin finished and the client read it all;
 * - "origin-error": the origin's stream broke mid-response (never retried: the client already
 *                   has part of the answer);
 * - "idle-timeout": the origin sent nothing for `idleMs` while the client waited for more; the
 *                   origin's connection is closed;
 * - "client-abort": the client went away (its cancel reaches the origin's connection).
 *
 * On the two origin failures an SSE stream gets a closing error event (`ending`, see
 * sse-ending.ts) and ends cleanly; any other body is aborted, so the client cannot take what it
 * has for a whole answer. Aborting is the only way to say so over HTTP, and the runtime reports
 * an aborted response body as an uncaught error ("Network connection lost" when the origin's
 * error is passed on), which is one more reason to end SSE streams with an event instead.
 *
 * A pull source rather than a TransformStream: the outcome needs to know which side ended the
 * stream (an origin failure counts against its circuit, a client leaving does not), and a
 * TransformStream reports both as the same abort. With a high-water mark of 0 it reads from the
 * origin only when the client is ready for more, so backpressure reaches the origin unchanged
 * and the idle clock runs only while the client is waiting on the origin.
 */
import { readWithin } from "./read-within.ts";
import { EventBoundary } from "./sse-ending.ts";
import type { Usage, UsageScanner } from "./usage-scanner.ts";

export type TapEndKind = "end" | "origin-error" | "idle-timeout" | "client-abort";
export type BreakKind = Extract<TapEndKind, "origin-error" | "idle-timeout">;

export interface TapEnd {
  kind: TapEndKind;
  usage: Usage;
}

export interface TapOptions {
  /** The origin's silence, while the client waits, after which the stream is ended. */
  idleMs: number;
  /**
   * For SSE: the bytes that end a stream the origin broke or stalled, told whether the bytes
   * passed so far end between two events; null to abort the stream instead.
   */
  ending: ((kind: BreakKind, atBoundary: boolean) => Uint8Array) | null;
}

export interface Tap {
  stream: ReadableStream<Uint8Array>;
  ended: Promise<TapEnd>;
}

/**
 * Tap a body whose first chunk has been read already (`first`); the reader holds the rest.
 */
export function tapUsage(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  first: Uint8Array,
  scanner: UsageScanner,
  options: TapOptions,
): Tap {
  const boundary = new EventBoundary();
  let pending: Uint8Array | null = first;
  let settle: ((end: TapEnd) => void) | null = null;
  const ended = new Promise<TapEnd>((resolve) => {
    settle = resolve;
  });
  const finish = (kind: TapEndKind) => {
    settle?.({ kind, usage: scanner.finish() });
    settle = null;
  };
  const pass = (controller: ReadableStreamDefaultController<Uint8Array>, bytes: Uint8Array) => {
    scanner.push(bytes);
    boundary.push(bytes);
    controller.enqueue(bytes);
  };
  const broke = (
    controller: ReadableStreamDefaultController<Uint8Array>,
    kind: BreakKind,
    error: unknown,
  ) => {
    finish(kind);
    // Closes the origin's connection (a stalled origin may be holding a GPU slot for us).
    reader.cancel(error).catch(() => undefined);
    if (options.ending === null) {
      controller.error(error);
      return;
    }
    controller.enqueue(options.ending(kind, boundary.atBoundary));
    controller.close();
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (pending !== null) {
          pass(controller, pending);
          pending = null;
          return;
        }
        let read: ReadableStreamReadResult<Uint8Array> | null;
        try {
          read = await readWithin(reader, options.idleMs);
        } catch (error) {
          broke(controller, "origin-error", error);
          return;
        }
        if (read === null) {
          const idle = `stream idle timeout: the origin sent nothing for ${options.idleMs} ms`;
          broke(controller, "idle-timeout", new Error(idle));
          return;
        }
        if (read.done) {
          finish("end");
          controller.close();
          return;
        }
        pass(controller, read.value);
      },
      cancel(reason) {
        finish("client-abort");
        // The origin's stream may have failed meanwhile; its error is nobody's to handle now.
        return reader.cancel(reason).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, ended };
}
