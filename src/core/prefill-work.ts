/**
 * How much prefill costs, in tokens at the engine's short-context speed. Each prefilled token
 * attends to every token before it, so with FlashAttention (compute-bound in prefill) a token at
 * position p costs 1 + p/A of a short-context token, where A is the context length at which a
 * token's attention FLOPs equal its linear-layer FLOPs (about 31K for Llama-3.1-8B, 54K for 70B:
 * bench/sim/engine/profiles.ts). Prefilling positions [cached, prompt) therefore costs
 *   (prompt - cached) * (1 + (cached + prompt) / (2A)).
 * A 64K-token prompt costs twice its length, so a queue holding one is twice as long as its
 * token count says; ignoring that sent requests behind long prompts.
 */
export function prefillWork(
  cachedTokens: number,
  promptTokens: number,
  attentionTokens: number,
): number {
  const n = Math.max(0, promptTokens - cachedTokens);
  return n * (1 + (cachedTokens + promptTokens) / (2 * attentionTokens));
}
