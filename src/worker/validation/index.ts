/**
 * The Worker's pure request checks as one entry for code outside the Worker (`npm run
 * bench:core` measures them): the JSON budget, the request parsers and the error they throw.
 * Nothing outside `src/worker` imports the Worker's other files (sim/imports.test.ts).
 */
export { ApiError } from "../errors/api-error.ts";
export { exceedsJsonBudget } from "./json-budget.ts";
export { chatRequest, completionRequest, validateLlmRequest } from "./llm-request.ts";
