/**
 * The policy registry: each policy registered once, as its parameter schema (tagged by `type`),
 * its factory and its traits (traits.ts: what it reads). The settings union, the list of types,
 * the factory and every question about what a policy reads all come from that one list, so
 * adding a policy is one file plus one registration below, and the compiler checks that each
 * factory takes its own policy's parameters and that its traits are all declared.
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
import type { PolicyTraits } from "./traits.ts";

/** A policy's parameters: a zod object whose `type` is the policy's name. */
type ParamsSchema = z.ZodObject<{ type: z.ZodLiteral<string> }, z.core.$ZodObjectConfig>;

/**
 * One policy's registration. `create` receives parameters its own schema produced, so the
 * factory never sees another policy's settings (no cast: the schema proves the shape). Traits
 * are required: a registration without them is a compile error, and throws if forced.
 */
export function register<S extends ParamsSchema>(
  params: S,
  create: (params: z.output<S>) => Policy,
  traits: PolicyTraits,
) {
  const type = params.shape.type.value;
  if (traits === undefined) throw new Error(`policy ${type} registered without its traits`);
  return {
    params,
    traits,
    create: (settings: { type: string }): Policy => create(params.parse(settings)),
  };
}

/** This router's own accounting and webhooks, nothing else: the default of a policy here. */
const OWN: PolicyTraits = {
  load: "none",
  loadReports: "webhook",
  kvEvents: false,
  firstToken: false,
  prefillSpeed: false,
  activeChunks: false,
};

const REGISTRY = [
  register(roundRobinParams, createRoundRobin, OWN),
  register(randomParams, createRandom, OWN),
  register(leastOutstandingParams, createLeastOutstanding, { ...OWN, load: "least" }),
  // SGLang's gateway polls worker loads (`load_check_interval_secs`).
  register(powerOfTwoParams, createPowerOfTwo, { ...OWN, load: "sampled", loadReports: "poll" }),
  // SGLang's prefix-hash reads only its own request counts.
  register(prefixHashParams, createPrefixHash, { ...OWN, load: "bound", loadReports: "none" }),
  register(hybridParams, createHybrid, { ...OWN, load: "least" }),
  // SGLang's cache-aware reads only its own request counts.
  register(cacheAwareParams, createCacheAware, { ...OWN, load: "least", loadReports: "none" }),
  register(costParams, createCost, { ...OWN, load: "scored", prefillSpeed: true }),
  // llm-d's gateway scrapes each pod's metrics (GIE `refreshMetricsInterval`).
  register(llmDParams, createLlmD, { ...OWN, load: "least", loadReports: "scrape" }),
  // llm-d-kv-cache feeds the precise scorer from the engines' KV events.
  register(llmDPreciseParams, createLlmDPrecise, {
    ...OWN,
    load: "least",
    loadReports: "scrape",
    kvEvents: true,
  }),
  // Dynamo's router reads its own active sequences and the engines' KV events; its frontend
  // streams the tokens, so it sees each first token.
  register(dynamoParams, createDynamo, {
    load: "least",
    loadReports: "none",
    kvEvents: true,
    firstToken: true,
    prefillSpeed: false,
    activeChunks: true,
  }),
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

/** What a policy type reads, as it registered (traits.ts). */
export function policyTraits(type: PolicyType): PolicyTraits {
  const registration = BY_TYPE.get(type);
  if (registration === undefined) throw new Error(`unknown policy ${JSON.stringify(type)}`);
  return registration.traits;
}

/**
 * Whether a pool's router must keep its in-flight prompt chunks (load-board/active-chunks.ts):
 * only policies that read `activeChunks` / `addedChunks` pay for it (live or shadow).
 */
export function usesActiveChunks(pool: {
  policy: PolicySettings;
  shadowPolicies: readonly PolicySettings[];
}): boolean {
  return [pool.policy, ...pool.shadowPolicies].some((p) => policyTraits(p.type).activeChunks);
}

/** Default parameters of a policy type, e.g. for `policyOf("cost")` in tests and the simulator. */
export function policyOf(type: PolicyType, params: Record<string, unknown> = {}): PolicySettings {
  return policySettings.parse({ ...params, type });
}
