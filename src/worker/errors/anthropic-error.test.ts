import { describe, expect, it } from "vitest";
import { anthropicStatus, speaksAnthropic } from "./anthropic-error.ts";

describe("anthropicStatus", () => {
  it.each([
    [400, 400, "invalid_request_error"],
    [401, 401, "authentication_error"],
    [403, 403, "permission_error"],
    [404, 404, "not_found_error"],
    [409, 409, "invalid_request_error"],
    [413, 413, "request_too_large"],
    [429, 429, "rate_limit_error"],
    [431, 431, "invalid_request_error"],
    [500, 500, "api_error"],
    [502, 502, "api_error"],
    [503, 529, "overloaded_error"],
  ])("the router's %i is Anthropic's %i %s", (status, mapped, type) => {
    expect(anthropicStatus(status)).toEqual({ status: mapped, type });
  });
});

describe("speaksAnthropic", () => {
  it("is /v1/messages and the paths under it, nothing else", () => {
    for (const path of ["/v1/messages", "/v1/messages/count_tokens", "/v1/messages/batches"])
      expect(speaksAnthropic(path), path).toBe(true);
    for (const path of ["/v1/messagesx", "/v1/chat/completions", "/v1//messages", "/messages"])
      expect(speaksAnthropic(path), path).toBe(false);
  });
});
