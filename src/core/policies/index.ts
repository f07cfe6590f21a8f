/**
 * The policy registry: one tagged settings union and an exhaustive factory. Adding a policy means
 * one file plus one line in each list below; the compiler checks the switch covers every type.
 */
import { z } from "zod";
import { cacheAwareParams, createCacheAware } from "./cache-aware.ts";
import { costParams, createCost } from "./cost.ts";
import { createDynamo, dynamoParams } from "./dynamo.ts";
import { createHybrid, hybridParams } from "./hybrid.ts";
import { createLeastOutstanding, leastOutstandingParams } from "./least-outstanding.ts";
import { createLlmD, llmDParams } from "./llm-d.ts";
import type { Policy } from "./policy.ts";
import { createPowerOfTwo, powerOfTwoParams } from "./power-of-two.ts";
import { createPrefixHash, prefixHashParams } from "./prefix-hash.ts";
import { createRandom, randomParams } from "./random.ts";
import { createRoundRobin, roundRobinParams } from "./round-robin.ts";

export const policySettings = z.discriminatedUnion("type", [
  roundRobinParams,
  randomParams,
  leastOutstandingParams,
  powerOfTwoParams,
  prefixHashParams,
  hybridParams,
  cacheAwareParams,
  costParams,
  llmDParams,
  dynamoParams,
]);
export type PolicySettings = z.infer<typeof policySettings>;
export type PolicyType = PolicySettings["type"];

export const POLICY_TYPES: readonly PolicyType[] = policySettings.options.map(
  (o) => o.shape.type.value,
);

/** A policy from its settings. Each call returns a fresh instance with its own state. */
export function createPolicy(settings: PolicySettings): Policy {
  switch (settings.type) {
    case "round-robin":
      return createRoundRobin();
    case "random":
      return createRandom();
    case "least-outstanding":
      return createLeastOutstanding();
    case "power-of-two":
      return createPowerOfTwo();
    case "prefix-hash":
      return createPrefixHash(settings);
    case "hybrid":
      return createHybrid(settings);
    case "cache-aware":
      return createCacheAware(settings);
    case "cost":
      return createCost(settings);
    case "llm-d":
      return createLlmD(settings);
    case "dynamo":
      return createDynamo(settings);
    default: {
      const unknown: never = settings;
      throw new Error(`unknown policy ${JSON.stringify(unknown)}`);
    }
  }
}

/** Default parameters of a policy type, e.g. for `policyOf("cost")` in tests and the simulator. */
export function policyOf(type: PolicyType, params: Record<string, unknown> = {}): PolicySettings {
  return policySettings.parse({ ...params, type });
}
