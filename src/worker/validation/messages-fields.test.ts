/**
 * Content-block checks of `/v1/messages` against block types that name Object's own members:
 * the fuzz found `{"type":"constructor"}` throwing (a 500) where any unknown type passes.
 */
import { describe, expect, it } from "vitest";
import { anthropicMessagesIssue, systemBlocksIssue } from "./messages-fields.ts";

describe("messages-fields: block types are looked up as own keys", () => {
  for (const type of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
    it(`a block typed ${type} is an unknown block, not a crash`, () => {
      const messages = [{ role: "user", content: [{ type }] }];
      expect(() => anthropicMessagesIssue(messages)).not.toThrow();
      expect(anthropicMessagesIssue(messages)).toBeUndefined();
      expect(systemBlocksIssue([{ type }])).toEqual(systemBlocksIssue([{ type: "unknown" }]));
    });
  }

  it("a known type still needs its fields", () => {
    const issue = anthropicMessagesIssue([{ role: "user", content: [{ type: "text" }] }]);
    expect(issue?.message).toBe("expected a string");
  });
});
