/**
 * The policy registry: each policy registered once, as its parameter schema (tagged by `type`)
 * and its factory. The settings union, the list of types and the factory all come from that one
 * list, so adding a policy is one file plus one line below, and the compiler checks that each
 * factory takes its own policy's parameters.
 */
import { z } from "zod";
import { cacheAwareParams, createCacheAware } from "./cache-aware.ts";
import { costParams, createCost } from "./cost.ts";
import { createDynamo, dynamoParams } from "./dynamo.ts";
import { createHybrid, hybridParams } from "./hybrid.ts";
import { createLeastOutstanding, leastOutstandingParams } from "./least-outstanding.ts";
import { createLlmD, llmDParams } from "./llm-d.ts";
import { createLlmDPrecise, llmDPreciseParams } from "./llm-d-precise.ts";
import type { Policy } from "./policy.ts";
import { createPowerOfTwo, powerOfTwoParams } from "./power-of-two.ts";
import { createPrefixHash, prefixHashParams } from "./prefix-hash.ts";
import { createRandom, randomParams } from "./random.ts";
import { createRoundRobin, roundRobinParams } from "./round-robin.ts";

/** A policy's parameters: a zod object whose `type` is the policy's name. */
type ParamsSchema = z.ZodObject<{ type: z.ZodLiteral<string> }, z.core.$ZodObjectConfig>;

/**
 * One policy's registration. `create` receives parameters its own schema produced, so the
 * factory never sees another policy's settings (no cast: the schema proves the shape).
 */
function register<S extends ParamsSchema>(params: S, create: (params: z.output<S>) => Policy) {
  return { params, create: (settings: { type: string }): Policy => create(params.parse(settings)) };
}

const REGISTRY = [
  register(roundRobinParams, createRoundRobin),
  register(randomParams, createRandom),
  register(leastOutstandingParams, createLeastOutstanding),
  register(powerOfTwoParams, createPowerOfTwo),
  register(prefixHashParams, createPrefixHash),
  register(hybridParams, createHybrid),
  register(cacheAwareParams, createCacheAware),
  register(costParams, createCost),
  register(llmDParams, createLlmD),
  register(llmDPreciseParams, createLlmDPrecise),
  register(dynamoParams, createDynamo),
] as const;

/** The registry's schemas as a tuple, which `z.discriminatedUnion` needs for its type. */
type Schemas<R> = { -readonly [K in keyof R]: R[K] extends { params: infer S } ? S : never };

export const policySettings = z.discriminatedUnion(
  "type",
  REGISTRY.map((r) => r.params) as Schemas<typeof REGISTRY>,
);
export type PolicySettings = z.infer<typeof policySettings>;
export type PolicyType = PolicySettings["type"];

export const POLICY_TYPES: readonly PolicyType[] = policySettings.options.map(
  (o) => o.shape.type.value,
);

const BY_TYPE: ReadonlyMap<string, (typeof REGISTRY)[number]> = new Map(
  REGISTRY.map((r) => [r.params.shape.type.value, r]),
);

/** A policy from its settings. Each call returns a fresh instance with its own state. */
export function createPolicy(settings: PolicySettings): Policy {
  const registration = BY_TYPE.get(settings.type);
  if (registration === undefined) throw new Error(`unknown policy ${JSON.stringify(settings)}`);
  return registration.create(settings);
}

/**
 * Whether a pool's router must keep its in-flight prompt chunks (load-board/active-chunks.ts):
 * only policies that read `activeChunks` / `addedChunks` pay for it (live or shadow).
 */
export function usesActiveChunks(pool: {
  policy: PolicySettings;
  shadowPolicies: readonly PolicySettings[];
}): boolean {
  return [pool.policy, ...pool.shadowPolicies].some((p) => ACTIVE_CHUNK_READERS.has(p.type));
}

const ACTIVE_CHUNK_READERS: ReadonlySet<PolicyType> = new Set(["dynamo"]);

/** Default parameters of a policy type, e.g. for `policyOf("cost")` in tests and the simulator. */
export function policyOf(type: PolicyType, params: Record<string, unknown> = {}): PolicySettings {
  return policySettings.parse({ ...params, type });
}
