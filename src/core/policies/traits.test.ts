import { describe, expect, it } from "vitest";
import { z } from "zod";
import { POLICY_TYPES, policyOf, policyTraits, register, usesActiveChunks } from "./index.ts";
import { createRandom } from "./random.ts";
import type { PolicyTraits } from "./traits.ts";

const EVERY_TRAIT: readonly (keyof PolicyTraits)[] = [
  "activeChunks",
  "firstToken",
  "kvEvents",
  "load",
  "loadReports",
  "prefillSpeed",
];

describe("policy traits", () => {
  it("every registered policy declares every trait", () => {
    for (const type of POLICY_TYPES) {
      expect(Object.keys(policyTraits(type)).sort(), type).toEqual(EVERY_TRAIT);
    }
  });

  it("a policy registered without traits does not compile, and throws if forced", () => {
    const untraitedParams = z.object({ type: z.literal("untraited") }).strict();
    // @ts-expect-error traits are a required argument of register
    expect(() => register(untraitedParams, createRandom)).toThrow(
      "policy untraited registered without its traits",
    );
  });

  it("the registrations say what the lists keyed by name said (behaviour unchanged)", () => {
    const least = POLICY_TYPES.filter((t) => policyTraits(t).load === "least");
    expect(least).toEqual([
      "least-outstanding",
      "hybrid",
      "cache-aware",
      "llm-d",
      "llm-d-precise",
      "dynamo",
    ]);
    expect(POLICY_TYPES.filter((t) => policyTraits(t).prefillSpeed)).toEqual(["cost"]);
    expect(POLICY_TYPES.filter((t) => policyTraits(t).activeChunks)).toEqual(["dynamo"]);
    expect(POLICY_TYPES.filter((t) => policyTraits(t).kvEvents)).toEqual([
      "llm-d-precise",
      "dynamo",
    ]);
  });

  it("a pool keeps in-flight chunks when its live or a shadow policy reads them", () => {
    const pool = (type: "dynamo" | "cost", shadow: readonly ("dynamo" | "cost")[]) => ({
      policy: policyOf(type),
      shadowPolicies: shadow.map((s) => policyOf(s)),
    });
    expect(usesActiveChunks(pool("cost", []))).toBe(false);
    expect(usesActiveChunks(pool("cost", ["dynamo"]))).toBe(true);
    expect(usesActiveChunks(pool("dynamo", []))).toBe(true);
  });
});
