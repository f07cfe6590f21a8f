import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exceedsJsonBudget, type JsonBudget } from "./json-budget.ts";

/** The reference: the same measures, taken from the parsed value. */
function measure(value: unknown, depth = 1): JsonBudget {
  const total = { maxDepth: 0, maxContainers: 0, maxKeys: 0, maxStrings: 0 };
  const visit = (v: unknown, d: number) => {
    if (typeof v === "string") total.maxStrings++;
    if (typeof v !== "object" || v === null) return;
    total.maxContainers++;
    total.maxDepth = Math.max(total.maxDepth, d);
    const children = Array.isArray(v) ? v : Object.values(v);
    if (!Array.isArray(v)) {
      total.maxKeys += children.length;
      total.maxStrings += children.length;
    }
    for (const child of children) visit(child, d + 1);
  };
  visit(value, depth);
  return total;
}

const MEASURES = ["maxDepth", "maxContainers", "maxKeys", "maxStrings"] as const;

describe("exceedsJsonBudget", () => {
  it("fits exactly the budget the parsed value measures, and not one less (any JSON)", () => {
    const json = fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v));
    fc.assert(
      fc.property(json, fc.boolean(), (text, spaced) => {
        const body = spaced ? JSON.stringify(JSON.parse(text), null, 1) : text;
        const exact = measure(JSON.parse(text));
        expect(exceedsJsonBudget(body, exact)).toBeUndefined();
        for (const key of MEASURES) {
          if (exact[key] === 0) continue;
          const tight = { ...exact, [key]: exact[key] - 1 };
          expect(exceedsJsonBudget(body, tight)).toBeDefined();
        }
      }),
      { numRuns: 500 },
    );
  });

  it("ignores brackets, braces, colons and escaped quotes inside strings", () => {
    const text = JSON.stringify({ a: '[{"x":1}] \\" \\\\', b: ['"', "\\", "}}}]]]"] });
    expect(exceedsJsonBudget(text, measure(JSON.parse(text)))).toBeUndefined();
    expect(measure(JSON.parse(text))).toEqual({
      maxDepth: 2,
      maxContainers: 2,
      maxKeys: 2,
      maxStrings: 6,
    });
  });

  it("names the top-level field where the budget ran out, unescaped", () => {
    const budget = { maxDepth: 3, maxContainers: 100, maxKeys: 100, maxStrings: 100 };
    const text = '{"model":"m","tool\\u0073":[{"a":[[1]]}],"after":[]}';
    expect(exceedsJsonBudget(text, budget)).toEqual({
      field: "tools",
      reason: "nested deeper than 3 levels",
    });
    const valueNotName = '{"model":"tools","x":[[[[1]]]]}';
    expect(exceedsJsonBudget(valueNotName, budget)?.field).toBe("x");
  });

  it("has no field when the body is not an object", () => {
    const budget = { maxDepth: 2, maxContainers: 100, maxKeys: 100, maxStrings: 100 };
    expect(exceedsJsonBudget('["a",[["b"]]]', budget)).toEqual({
      field: undefined,
      reason: "nested deeper than 2 levels",
    });
  });

  it("leaves malformed JSON to JSON.parse", () => {
    expect(exceedsJsonBudget('{"unterminated')).toBeUndefined();
    expect(exceedsJsonBudget("]]]}}}")).toBeUndefined();
  });
});
