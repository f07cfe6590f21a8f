/** A promise raced against a timer, for calls whose lateness has a fallback (the pool's object). */

export class DeadlineError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = "DeadlineError";
  }
}

/** Rejects with `DeadlineError` after `ms`; the timer never outlives the race. */
export function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(ms)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => {
    if (timer !== undefined) clearTimeout(timer);
  });
}

/**
 * `call`'s answer within `ms`, or why there is none (the error's name: `DeadlineError`, ...),
 * for pages that show many objects, where one stuck object must not fail the page.
 */
export async function answerWithin<T>(
  call: () => Promise<T>,
  ms: number,
): Promise<{ answer: T | null; error: string | null }> {
  try {
    return { answer: await withDeadline(call(), ms), error: null };
  } catch (error) {
    return { answer: null, error: error instanceof Error ? error.name : "error" };
  }
}
