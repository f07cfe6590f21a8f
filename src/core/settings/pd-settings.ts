/**
 * Settings of disaggregated prefill/decode (P/D) serving (docs/api.md, "Disaggregated
 * prefill/decode"): an origin's `pd` block (the protocol its engines speak, and how the other
 * engines reach it) and a pool's `disaggregation` rule (when a request is worth a remote
 * prefill), with the checks that span fields: which roles need, allow or forbid which fields,
 * and what a pool must hold. Each check names the field it is about.
 *
 * The protocols, as upstream builds them (research/disaggregation.md):
 * - `vllm-nixl`: vLLM's NixlConnector, driven by the router in two legs (prefill, then decode
 *   with the `kv_transfer_params` the prefill returned). `engineHost` is the `remote_host` the
 *   decode dials (vLLM answers `localhost` unless told; production-stack overwrites it).
 * - `sglang`: SGLang's bootstrap, both legs at once with `bootstrap_host` (`engineHost`, else
 *   the URL's host), `bootstrap_port` (`bootstrapPort`, else SGLang's 8998) and a room.
 * - `llmd-sidecar`: one request to the decode origin's llm-d sidecar with
 *   `x-prefiller-host-port` (`engineHost` with its port, else the URL's host and port).
 *
 * Whether a prefill origin may also serve a request whole (`prefillServesWhole`, off unless
 * set: bench/sim/README.md measured it no better on either workload) is the engine's to allow:
 * vLLM's NixlConnector does not tell `kv_role`s apart and serves a request without
 * `kv_transfer_params` as any engine does (its `request_finished` and
 * `get_num_new_matched_tokens` do nothing for one; its usage guide runs both sides `kv_both`),
 * and llm-d's prefill pods are vLLM. SGLang's prefill mode sends every request through its
 * bootstrap queue with `max_new_tokens` 1 (disaggregation/prefill.py, `PrefillBootstrapQueue`):
 * it cannot, and `sglang` refuses it.
 */
import { z } from "zod";

export const PD_PROTOCOLS = ["vllm-nixl", "sglang", "llmd-sidecar"] as const;
export type PdProtocol = (typeof PD_PROTOCOLS)[number];

/** SGLang's default `--disaggregation-bootstrap-port`, used when a prefill origin sets none. */
export const SGLANG_BOOTSTRAP_PORT = 8998;

/** A DNS name, an IPv4 address or a bracketed IPv6 address, then an optional `:port`. */
const HOST_PORT =
  /^(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*)(?::(\d{1,5}))?$/;

/** The port of a valid `engineHost`, or undefined when it names none. */
export function engineHostPort(engineHost: string): number | undefined {
  const port = HOST_PORT.exec(engineHost)?.[1];
  return port === undefined ? undefined : Number(port);
}

export const pdSettings = z
  .object({
    protocol: z.enum(PD_PROTOCOLS),
    /** sglang prefill origins: the bootstrap port decode engines dial (default 8998). */
    bootstrapPort: z.number().int().min(1).max(65535).optional(),
    /** Prefill origins: the host (llmd-sidecar: host[:port]) other engines reach it at. */
    engineHost: z
      .string()
      .max(260)
      .regex(HOST_PORT, "must be a host name, IPv4 or [IPv6] address, with an optional :port")
      .refine((host) => {
        const port = engineHostPort(host);
        return port === undefined || (port >= 1 && port <= 65535);
      }, "port must be 1-65535")
      .optional(),
  })
  .strict();

export type PdSettings = z.infer<typeof pdSettings>;

/**
 * When a pool with prefill origins disaggregates a request, after choosing its decode origin
 * (Dynamo's conditional disaggregation, lib/kv-router/src/conditional_disagg.rs): a remote
 * prefill when the decode origin would have to prefill at least `minUncachedTokens`, or more
 * than `maxUncachedFraction` of the prompt; none when the best prefill origin's queue is longer
 * than `prefillBusyMs`. `router/disaggregation.ts` applies it; docs/api.md gives the reasons
 * for the defaults.
 */
export const disaggregationSettings = z
  .object({
    /** Uncached tokens on the decode origin from which the prefill goes remote (Dynamo: 2048). */
    minUncachedTokens: z.number().int().min(0).max(1e9).default(2048),
    /** Uncached share above which it goes remote whatever its size (Dynamo 0.7; 1 = never). */
    maxUncachedFraction: z.number().min(0).max(1).default(1),
    /** Prefill on the decode origin when the best prefill origin's queue is longer (ms). */
    prefillBusyMs: z.number().int().min(0).max(3_600_000).default(100),
    /** Prefill origins may serve a request whole while idle (router/disaggregation.ts). */
    prefillServesWhole: z.boolean().default(false),
  })
  .strict();

export type DisaggregationSettings = z.infer<typeof disaggregationSettings>;

export type OriginRole = "both" | "prefill" | "decode";

/** What the cross-field checks read of an origin. */
interface PdOrigin {
  readonly role: OriginRole;
  readonly pd?: PdSettings | undefined;
}

export interface PdIssue {
  /** Path below the checked object. */
  readonly path: (string | number)[];
  readonly message: string;
}

/** One origin's role against its `pd` block. */
export function originPdIssues(origin: PdOrigin): PdIssue[] {
  const { role, pd } = origin;
  if (role === "both") {
    return pd === undefined
      ? []
      : [{ path: ["pd"], message: "only for role prefill or decode: a both origin serves alone" }];
  }
  if (pd === undefined) return [{ path: ["pd"], message: `required for role ${role}` }];
  const issues: PdIssue[] = [];
  if (pd.bootstrapPort !== undefined && pd.protocol !== "sglang")
    issues.push({ path: ["pd", "bootstrapPort"], message: "only for protocol sglang" });
  if (role === "decode") {
    // Engines dial the prefill engine, never the decode: these name nothing on a decode origin.
    for (const field of ["bootstrapPort", "engineHost"] as const) {
      if (pd[field] !== undefined)
        issues.push({
          path: ["pd", field],
          message: "only on prefill origins (engines dial them)",
        });
    }
  } else if (pd.engineHost !== undefined && pd.protocol !== "llmd-sidecar") {
    if (engineHostPort(pd.engineHost) !== undefined)
      issues.push({
        path: ["pd", "engineHost"],
        message: `a port only for protocol llmd-sidecar (${pd.protocol} learns or sets its own)`,
      });
  }
  return issues;
}

/**
 * A pool's origins together: prefill origins need a decode origin to hand their KV to (a `both`
 * origin takes none), every P/D origin speaks the pool's one protocol, and that protocol's
 * prefill engines can serve a request whole if the rule says they do.
 */
export function poolPdIssues(
  origins: readonly PdOrigin[],
  rule?: Pick<DisaggregationSettings, "prefillServesWhole">,
): PdIssue[] {
  const issues: PdIssue[] = [];
  const hasPrefill = origins.some((o) => o.role === "prefill");
  if (hasPrefill && !origins.some((o) => o.role === "decode"))
    issues.push({
      path: ["origins"],
      message: "prefill origins need an origin with role decode to hand their KV to",
    });
  const first = origins.findIndex((o) => o.pd !== undefined);
  const protocol = origins[first]?.pd?.protocol;
  origins.forEach((o, i) => {
    if (o.pd !== undefined && o.pd.protocol !== protocol)
      issues.push({
        path: ["origins", i, "pd", "protocol"],
        message: `one protocol per pool: origins[${first}] speaks ${protocol}`,
      });
  });
  if (rule?.prefillServesWhole === true && protocol === "sglang")
    issues.push({
      path: ["disaggregation", "prefillServesWhole"],
      message:
        "SGLang prefill engines (--disaggregation-mode prefill) cannot serve a request whole",
    });
  return issues;
}
