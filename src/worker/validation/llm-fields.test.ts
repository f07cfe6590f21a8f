import { describe, expect, it } from "vitest";
import { messagesIssue, promptIssue } from "./llm-fields.ts";

describe("promptIssue", () => {
  it.each([
    ["a string", "hi"],
    ["an empty string", ""],
    ["strings", ["a", "b"]],
    ["token ids", [0, 1, 128_000, Number.MAX_SAFE_INTEGER]],
    ["lists of token ids", [[1], [2, 3]]],
  ])("accepts %s", (_, prompt) => {
    expect(promptIssue(prompt)).toBeUndefined();
  });

  it.each([
    ["an empty array", [], []],
    ["a number among strings", ["a", 1], [1]],
    ["a string among token ids", [1, "a"], [1]],
    ["a negative token id", [1, -1], [1]],
    ["a fractional token id", [1.5], [0]],
    ["a token id past 2^53", [2 ** 53], [0]],
    ["an object", [{ a: 1 }], [0]],
    ["an empty list of token ids", [[1], []], [1]],
    ["a token id among lists", [[1], 2], [1]],
    ["a string in a list of token ids", [[1, "a"]], [0, 1]],
    ["a list nested too deep", [[[1]]], [0, 0]],
  ])("names the first bad element of %s", (_, prompt, path) => {
    expect(promptIssue(prompt)?.path).toEqual(path);
  });
});

describe("messagesIssue", () => {
  it("accepts messages with a role, whatever else they hold", () => {
    expect(messagesIssue([{ role: "user", content: 1 }, { role: "x" }])).toBeUndefined();
  });

  it.each([
    ["no message", [], []],
    ["a message that is not an object", [{ role: "user" }, []], [1]],
    ["a missing role", [{ role: "user" }, { content: "hi" }], [1, "role"]],
    ["an empty role", [{ role: "" }], [0, "role"]],
    ["a role that is not a string", [{ role: 1 }], [0, "role"]],
  ])("names the first bad element for %s", (_, messages, path) => {
    expect(messagesIssue(messages)?.path).toEqual(path);
  });
});
