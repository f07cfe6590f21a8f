/**
 * The structural budget of an LLM request body, checked in one pass over its text before
 * JSON.parse sees it.
 *
 * JSON.parse's cost follows a body's shape more than its size. In V8 each object or array
 * costs about 120 ns and 30-60 bytes of heap, each distinct object key about 1 µs and 250
 * bytes (a new hidden class), each short distinct string a few hundred ns. So 16 MB of
 * `[[[[...]]]]` (or of `[],[],...`) took 2.3 s and 464 MB of heap (a Worker isolate has 128
 * MB), and JSON.stringify of such nesting (the canonical prompt stringifies `tools` whole) ran
 * for seconds or overflowed the stack. The budget bounds each measure; at the budget the
 * costliest shape measured, 262,144 distinct keys, parses in about 170 ms and 64 MB
 * (`npm run bench:core`, worst request shapes). The depth bound also keeps every recursive walk
 * of the parsed body shallow.
 *
 * The scan skips strings with `String.prototype.indexOf` (a native search, several times
 * faster per byte than `Uint8Array.prototype.indexOf` measured, so a body that is mostly text
 * costs little) and looks at every other character once: O(length). It trusts nothing: on malformed JSON it may
 * count nonsense, and JSON.parse then rejects the body anyway.
 */

export interface JsonBudget {
  /** Deepest nesting of objects and arrays (the body's own object is depth 1). */
  maxDepth: number;
  /** Objects and arrays in the whole body. */
  maxContainers: number;
  /** Object keys in the whole body. */
  maxKeys: number;
  /** Strings in the whole body, object keys included. */
  maxStrings: number;
}

/**
 * The default budget (docs/api.md). Depth 128 is serde_json's default recursion limit; a
 * request with 100k content parts holds about 100k objects and 400k strings.
 */
export const JSON_BUDGET: JsonBudget = {
  maxDepth: 128,
  maxContainers: 262_144,
  maxKeys: 262_144,
  maxStrings: 524_288,
};

export interface BudgetExceeded {
  /** The top-level field where the budget ran out (undefined when the body is not an object). */
  field: string | undefined;
  reason: string;
}

// Characters are compared with literals: module constants measured 1.7x slower in this loop
// (V8 loads them from the module's context on every character).

/** Longest top-level field name quoted back in an error. */
const MAX_FIELD_CHARS = 64;

/** The index of the quote that closes the string opened at `open`, or -1. */
function closingQuote(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return -1;
    // Escaped if an odd run of backslashes precedes it. Each run is walked once, so O(length).
    let slash = at - 1;
    while (text.charCodeAt(slash) === 0x5c /* \ */) slash--;
    if ((at - 1 - slash) % 2 === 0) return at;
  }
}

function fieldName(text: string, open: number, close: number): string | undefined {
  if (open < 0) return undefined;
  try {
    const name = JSON.parse(text.slice(open, close + 1));
    return typeof name === "string" ? name.slice(0, MAX_FIELD_CHARS) : undefined;
  } catch {
    return undefined;
  }
}

/** The first way `text` (JSON) exceeds `budget`, or undefined if it fits. */
export function exceedsJsonBudget(
  text: string,
  budget: JsonBudget = JSON_BUDGET,
): BudgetExceeded | undefined {
  // Plain locals only: a closure over them would move them to the heap and slow every byte.
  let depth = 0;
  let containers = 0;
  let keys = 0;
  let strings = 0;
  // The current top-level field: its name's quotes, and whether the next string is a name.
  let fieldOpen = -1;
  let fieldClose = -1;
  let nameNext = false;
  let topIsObject = false;
  let reason: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const byte = text.charCodeAt(i);
    if (byte >= 0x30 /* 0 */ && byte <= 0x39 /* 9 */) continue; // the bulk of token ids
    if (byte === 0x22 /* " */) {
      const close = closingQuote(text, i);
      if (close < 0) return undefined; // unterminated: not JSON
      if (++strings > budget.maxStrings) {
        reason = `the body holds more than ${budget.maxStrings} strings`;
        break;
      }
      if (nameNext && depth === 1) {
        fieldOpen = i;
        fieldClose = close;
        nameNext = false;
      }
      i = close;
    } else if (byte === 0x7b /* { */ || byte === 0x5b /* [ */) {
      if (++depth > budget.maxDepth) {
        reason = `nested deeper than ${budget.maxDepth} levels`;
        break;
      }
      if (++containers > budget.maxContainers) {
        reason = `the body holds more than ${budget.maxContainers} objects and arrays`;
        break;
      }
      if (depth === 1) nameNext = topIsObject = byte === 0x7b /* { */;
    } else if (byte === 0x7d /* } */ || byte === 0x5d /* ] */) {
      depth--;
    } else if (byte === 0x2c /* , */) {
      if (depth === 1) nameNext = topIsObject;
    } else if (byte === 0x3a /* : */ && ++keys > budget.maxKeys) {
      reason = `the body holds more than ${budget.maxKeys} object keys`;
      break;
    }
  }
  return reason === undefined
    ? undefined
    : { field: fieldName(text, fieldOpen, fieldClose), reason };
}
