/**
 * Prompt text for trace records: each 512-token block id becomes the same 2,048 bytes of text
 * wherever it appears (4 bytes per token, the router's estimate), so requests that share blocks
 * in the trace share bytes on the wire, and the router and engines see the trace's real prefix
 * sharing. The last block is cut to the record's length. A CPU engine cannot prefill a trace's
 * prompts in seconds: `bytesPerBlock` shrinks every block alike (same sharing, shorter text).
 * The text is printable ASCII (the project's llama.cpp models know nothing else).
 */
export const BYTES_PER_BLOCK = 512 * 4;
const VOCABULARY = [
  "the",
  "model",
  "cache",
  "prefix",
  "token",
  "route",
  "origin",
  "edge",
  "query",
  "answer",
  "context",
  "block",
];

function blockText(id: number, bytes: number): string {
  let state = (id * 2654435761 + 1013904223) >>> 0;
  let text = `[${id}] `;
  while (text.length < bytes) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    text += `${VOCABULARY[state % VOCABULARY.length]}${state % 97} `;
  }
  return text.slice(0, bytes);
}

export function promptText(
  blockIds: readonly number[],
  inputTokens: number,
  bytesPerBlock = BYTES_PER_BLOCK,
): string {
  let text = "";
  for (const id of blockIds) text += blockText(id, bytesPerBlock);
  return text.slice(0, Math.round((inputTokens * 4 * bytesPerBlock) / BYTES_PER_BLOCK));
}
