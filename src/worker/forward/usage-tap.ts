/**
 * The origin's response body on its way to the client, observed and never changed: every
 * chunk is passed on as the same bytes, and a `UsageScanner` reads the final usage as it goes.
 * `ended` resolves once, with how the body ended:
 * - "end":          the origin finished and the client read it all;
 * - "origin-error": the origin's stream broke mid-response (passed on to the client as an
 *                   error, never retried: the client already has part of the answer);
 * - "client-abort": the client went away (its cancel reaches the origin's connection).
 *
 * A pull source rather than a TransformStream: the outcome needs to know which side ended the
 * stream (an origin failure counts against its circuit, a client leaving does not), and a
 * TransformStream reports both as the same abort. With a high-water mark of 0 it reads from the
 * origin only when the client is ready for more, so backpressure reaches the origin unchanged.
 */
import type { Usage, UsageScanner } from "./usage-scanner.ts";

export type TapEndKind = "end" | "origin-error" | "client-abort";

export interface TapEnd {
  kind: TapEndKind;
  usage: Usage;
  /** Clock reading when the first body byte arrived, null if none did. */
  firstByteAt: number | null;
}

export interface Tap {
  stream: ReadableStream<Uint8Array>;
  ended: Promise<TapEnd>;
}

export function tapUsage(
  body: ReadableStream<Uint8Array>,
  scanner: UsageScanner,
  clock: () => number,
): Tap {
  const reader = body.getReader();
  let firstByteAt: number | null = null;
  let settle: ((end: TapEnd) => void) | null = null;
  const ended = new Promise<TapEnd>((resolve) => {
    settle = resolve;
  });
  const finish = (kind: TapEndKind) => {
    settle?.({ kind, usage: scanner.finish(), firstByteAt });
    settle = null;
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let read: ReadableStreamReadResult<Uint8Array>;
        try {
          read = await reader.read();
        } catch (error) {
          finish("origin-error");
          controller.error(error);
          return;
        }
        if (read.done) {
          finish("end");
          controller.close();
          return;
        }
        firstByteAt ??= clock();
        scanner.push(read.value);
        controller.enqueue(read.value);
      },
      cancel(reason) {
        finish("client-abort");
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, ended };
}
