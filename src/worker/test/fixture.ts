/** Constants shared by the test origin server (Node) and the tests (workerd). */

/** `usage.prompt_tokens_details.cached_tokens` in every answer of the test origins. */
export const CACHED_TOKENS = 32;
