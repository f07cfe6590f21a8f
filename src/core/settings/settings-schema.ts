/**
 * The settings document (one JSON value in Workers KV under `settings`): pools keyed by model
 * name, each with its origins, its policy and the knobs of routing, failover and accounting.
 * Every field has a documented default, so `{ "pools": { "m": { "origins": [...] } } }` is a
 * complete document. Unknown fields are rejected rather than ignored: a typo must not silently
 * fall back to a default.
 */
import { z } from "zod";
import { DEFAULT_CHUNK_BYTES } from "../chunk-hash.ts";
import { policySettings } from "../policies/index.ts";
import { admissionSettings } from "./admission-settings.ts";
import { COORDINATION_MODES, edgeIssues, edgeSettings } from "./edge-settings.ts";
import { modelName } from "./model-name.ts";
import {
  disaggregationSettings,
  originPdIssues,
  type PdIssue,
  pdSettings,
  poolPdIssues,
} from "./pd-settings.ts";
import {
  PROTOTYPE_KEY_REASON,
  PROTOTYPE_KEYS,
  ROUTER_BINDING_REASON,
  ROUTER_BINDINGS,
} from "./reserved-names.ts";
import { storedResponseSettings } from "./stored-response-settings.ts";

export const originSettings = z
  .object({
    /** Stable name used in headers, metrics and webhooks. */
    id: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/,
        "must be 1-64 of A-Z a-z 0-9 . _ : - (not first)",
      )
      .refine((id) => !PROTOTYPE_KEYS.has(id), PROTOTYPE_KEY_REASON),
    /** Base URL of the engine's OpenAI-compatible server, e.g. https://gpu-a.example.com. */
    url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
    /** Name of the Worker secret holding this origin's API key (sent as Bearer); never the key. */
    apiKeySecret: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]{0,63}$/, "must be an UPPER_SNAKE_CASE secret name")
      .refine((name) => !ROUTER_BINDINGS.includes(name), ROUTER_BINDING_REASON)
      .optional(),
    /** KV cache size in tokens; engine capacity reports override it. */
    kvCapacityTokens: z.number().int().min(1).max(1e9).optional(),
    /** Prefill speed in tokens/s; defaults to the pool's. */
    prefillTokensPerSecond: z.number().min(1).max(1e7).optional(),
    /**
     * `both`: serves whole requests. `prefill`: only prefills, for a decode origin to take the
     * KV over (pd-settings.ts). `decode`: decodes after a remote prefill, or serves alone.
     */
    role: z.enum(["both", "prefill", "decode"]).default("both"),
    /** Prefill and decode origins: the P/D protocol and how engines reach this one. */
    pd: pdSettings.optional(),
    /** Relative capacity for the load-balancing policies. */
    weight: z.number().min(0.01).max(1000).default(1),
  })
  .strict()
  .superRefine((origin, ctx) => addIssues(ctx, originPdIssues(origin)));

function addIssues(ctx: z.RefinementCtx, issues: readonly PdIssue[]): void {
  for (const { path, message } of issues) ctx.addIssue({ code: "custom", path, message });
}

const retrySettings = z
  .object({
    /** Total attempts per request, first one included. */
    maxAttempts: z.number().int().min(1).max(10).default(3),
    backoffMs: z.number().min(0).max(10000).default(50),
    backoffMultiplier: z.number().min(1).max(10).default(1.5),
  })
  .strict();

const circuitSettings = z
  .object({
    /** Consecutive failures that open an origin's circuit. */
    failureThreshold: z.number().int().min(1).max(1000).default(5),
    /** Time an open circuit waits before letting one probe request through. */
    cooldownMs: z.number().int().min(100).max(3_600_000).default(30_000),
  })
  .strict();

export const LOCATION_HINTS = [
  "wnam",
  "enam",
  "sam",
  "weur",
  "eeur",
  "apac",
  "oc",
  "afr",
  "me",
] as const;

/** A pool's body limit unless it sets one; also the Worker's limit when no pool exists. */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Who may send a pool LLM requests while no client key names it (once a key names it, or `*`,
 * only clients with a key that may use it, whatever this says; worker/access/): `keys`, the
 * default, no one (403 `pool_closed`), so a fresh deploy serves no one until its operator says
 * so; `open`, anyone who can reach the router.
 */
export const POOL_ACCESS = ["keys", "open"] as const;

export const poolSettings = z
  .object({
    policy: policySettings.prefault({ type: "cost" }),
    access: z.enum(POOL_ACCESS).default("keys"),
    /** Policies asked on every request what they would have chosen, without acting on it. */
    shadowPolicies: z.array(policySettings).max(4).default([]),
    origins: z
      .array(originSettings)
      .min(1)
      .max(256)
      .superRefine((origins, ctx) => {
        const seen = new Set<string>();
        origins.forEach((o, i) => {
          if (seen.has(o.id))
            ctx.addIssue({ code: "custom", path: [i, "id"], message: "duplicate origin id" });
          seen.add(o.id);
        });
      }),
    /** Bytes per hashed chunk; 256 bytes is about 64 tokens. */
    chunkBytes: z.number().int().min(64).max(8192).multipleOf(16).default(DEFAULT_CHUNK_BYTES),
    /** Prefill speed assumed for origins that do not set their own. */
    prefillTokensPerSecond: z.number().min(1).max(1e7).default(10_000),
    /**
     * Context length at which attention doubles a prefilled token's cost (see prefill-work.ts):
     * about 31K for Llama-3.1-8B, 54K for 70B.
     */
    prefillAttentionTokens: z.number().int().min(1024).max(1e8).default(32_768),
    /** KV capacity assumed for origins that neither set nor report one. */
    kvCapacityTokens: z.number().int().min(1).max(1e9).default(500_000),
    /** The Worker waits this long for the pool's Durable Object before routing alone. */
    routeTimeoutMs: z.number().int().min(10).max(30_000).default(1000),
    /** Time to an origin's first response body byte before the attempt counts as failed. */
    firstByteTimeoutMs: z.number().int().min(100).max(600_000).default(60_000),
    /** A response body the origin sends nothing of for this long is ended (docs/api.md). */
    streamIdleTimeoutMs: z.number().int().min(100).max(3_600_000).default(300_000),
    retry: retrySettings.prefault({}),
    circuit: circuitSettings.prefault({}),
    /** A request whose completion is never reported stops counting as load after this long. */
    leaseMs: z.number().int().min(1000).max(3_600_000).default(600_000),
    /** Engine reports count fully while younger than this, then fade to nothing at staleMs. */
    reportFreshMs: z.number().int().min(100).max(600_000).default(5000),
    reportStaleMs: z.number().int().min(100).max(3_600_000).default(30_000),
    /** Largest accepted request body. */
    maxBodyBytes: z
      .number()
      .int()
      .min(1024)
      .max(512 * 1024 * 1024)
      .default(DEFAULT_MAX_BODY_BYTES),
    /** Distinct chunks the pool's index may hold (about 30-40 bytes each). */
    indexMaxChunks: z.number().int().min(1000).max(4_000_000).default(1_000_000),
    /**
     * What fills the index (router/index-feed.ts): the router's own decisions, or the engines'
     * kv-stored / kv-removed events (which today only the simulator's engines send).
     */
    indexFeed: z.enum(["router", "engine-events"]).default("router"),
    /** Where the pool's Durable Object should be created (near its GPUs). */
    locationHint: z.enum(LOCATION_HINTS).optional(),
    /** When to prefill on a prefill origin (pools with prefill origins; pd-settings.ts). */
    disaggregation: disaggregationSettings.prefault({}),
    /** Who decides each request: the pool's Durable Object, or each isolate (edge-settings.ts). */
    coordination: z.enum(COORDINATION_MODES).default("object"),
    edge: edgeSettings.prefault({}),
    /** The pool's latency objective: requests past it wait or are shed; absent, admission is off. */
    admission: admissionSettings.optional(),
    /** Which origin stored each OpenAI Responses id (stored-response-settings.ts). */
    storedResponses: storedResponseSettings.prefault({}),
  })
  .strict()
  .superRefine((pool, ctx) => addIssues(ctx, poolPdIssues(pool.origins, pool.disaggregation)))
  .superRefine((pool, ctx) => addIssues(ctx, edgeIssues(pool)))
  .refine((p) => p.reportStaleMs >= p.reportFreshMs, {
    path: ["reportStaleMs"],
    message: "must be >= reportFreshMs",
  });

export const settingsSchema = z
  .object({
    version: z.literal(1).default(1),
    /** Pools by model name; an empty map is valid (every model is then unknown: 404). */
    pools: z.record(
      modelName.refine((model) => !PROTOTYPE_KEYS.has(model), PROTOTYPE_KEY_REASON),
      poolSettings,
    ),
  })
  .strict();

export type OriginSettings = z.infer<typeof originSettings>;
export type PoolSettings = z.infer<typeof poolSettings>;
export type Settings = z.infer<typeof settingsSchema>;
export type SettingsInput = z.input<typeof settingsSchema>;
export type PoolSettingsInput = z.input<typeof poolSettings>;
