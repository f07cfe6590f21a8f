/**
 * Element checks of an LLM request's arrays (`messages`, `prompt`), by hand: one pass over the
 * elements, no allocation, stopping at the first bad one, which is the only issue reported.
 *
 * Not zod: zod copies every array it parses and allocates a result per element, and a union
 * tries every branch, each recording one issue per element. A prompt of 1M token ids took
 * 3.0 s and 219 MB that way, and 16 MB of them ran a 4 GB heap out of memory (issue 9). The
 * checks here are a few `typeof` tests per element; zod still checks the envelope
 * (`llm-request.ts`).
 */

/** The first bad element: its path below the field, and what was expected there. */
export interface FieldIssue {
  path: (string | number)[];
  message: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** At least one message, each an object with a non-empty string `role`. */
export function messagesIssue(messages: unknown[]): FieldIssue | undefined {
  if (messages.length === 0) return { path: [], message: "expected at least one message" };
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (!isObject(message)) return { path: [i], message: "expected a message object" };
    const role = message.role;
    if (typeof role !== "string" || role.length === 0) {
      return { path: [i, "role"], message: "expected a non-empty string" };
    }
  }
  return undefined;
}

/** At least one token id, each an integer >= 0 (a safe one, as JSON numbers are doubles). */
function tokenIdsIssue(ids: unknown[]): FieldIssue | undefined {
  if (ids.length === 0) return { path: [], message: "expected at least one token id" };
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (!Number.isSafeInteger(id) || (id as number) < 0) {
      return { path: [i], message: "expected a token id (an integer >= 0)" };
    }
  }
  return undefined;
}

/**
 * A completion prompt: a string, or a non-empty array of strings, of token ids, or of
 * non-empty arrays of token ids. The first element decides which array it is.
 */
export function promptIssue(prompt: string | unknown[]): FieldIssue | undefined {
  if (typeof prompt === "string") return undefined;
  if (prompt.length === 0) return { path: [], message: "expected at least one item" };
  const first = prompt[0];
  if (typeof first === "string") {
    for (let i = 1; i < prompt.length; i++) {
      if (typeof prompt[i] !== "string") return { path: [i], message: "expected a string" };
    }
    return undefined;
  }
  if (!Array.isArray(first)) return tokenIdsIssue(prompt);
  for (let i = 0; i < prompt.length; i++) {
    const ids = prompt[i];
    if (!Array.isArray(ids)) return { path: [i], message: "expected an array of token ids" };
    const issue = tokenIdsIssue(ids);
    if (issue) return { path: [i, ...issue.path], message: issue.message };
  }
  return undefined;
}
