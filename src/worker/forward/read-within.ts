/**
 * One read of a stream with a deadline. A timed-out read stays pending in the stream until the
 * caller cancels the reader; whatever it settles with later lands on a promise already settled,
 * so it can never surface as an unhandled rejection.
 */
export function readWithin<T>(
  reader: ReadableStreamDefaultReader<T>,
  ms: number,
): Promise<ReadableStreamReadResult<T> | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(null), Math.max(0, ms));
    reader.read().then(
      (result) => {
        clearTimeout(timer);
        resolve(result);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
