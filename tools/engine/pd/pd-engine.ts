/**
 * The P/D role of a simulated engine from its options (`npm run engine -- --role R --pd P`):
 * which side of which protocol it plays, with the engines' own defaults except for ports, which
 * default to free ones so several pairs run on one machine.
 */
import { type KvLoadFailurePolicy, nixlDecode } from "./nixl-decode.ts";
import { startNixlPrefill } from "./nixl-prefill.ts";
import type { PdProtocol, PdRole, PdRoleName } from "./pd-role.ts";
import { sglangDecode } from "./sglang-decode.ts";
import { startSglangPrefill } from "./sglang-prefill.ts";

export interface PdEngineOptions {
  readonly protocol: PdProtocol;
  readonly role: PdRoleName;
  /** vllm-nixl prefill: how long transferred blocks are held (vLLM's kv_lease_duration, 30 s). */
  readonly kvLeaseMs?: number;
  /** vllm-nixl decode: what a failed transfer does (vLLM's kv_load_failure_policy, `fail`). */
  readonly loadFailurePolicy?: KvLoadFailurePolicy;
  /** vllm-nixl prefill: side channel port (vLLM's 5600 + DP rank; 0 = a free port). */
  readonly sideChannelPort?: number;
  /** vllm-nixl prefill: the `remote_host` it answers (vLLM's default `localhost`). */
  readonly sideChannelHost?: string;
  /** sglang prefill: bootstrap port (SGLang's 8998; 0 = a free port). */
  readonly bootstrapPort?: number;
  /** sglang: how long either side waits for the other in a room. */
  readonly bootstrapTimeoutMs?: number;
}

export interface PdContext {
  /** The engine's id; vLLM's engine id is made from it. */
  readonly id: string;
  /** Where the engine (and its private channel) listens. */
  readonly host: string;
  readonly blockTokens: number;
  localBlocks(hashes: ArrayLike<number>): number;
  log(line: string): void;
}

const TRANSFER_TIMEOUT_MS = 10_000;

export async function startPdRole(options: PdEngineOptions, context: PdContext): Promise<PdRole> {
  const bootstrapTimeoutMs = options.bootstrapTimeoutMs ?? 30_000;
  if (options.protocol === "sglang") {
    return options.role === "prefill"
      ? startSglangPrefill({
          host: context.host,
          bootstrapPort: options.bootstrapPort ?? 0,
          bootstrapTimeoutMs,
        })
      : sglangDecode({ bootstrapTimeoutMs });
  }
  if (options.role === "prefill") {
    return startNixlPrefill({
      engineId: `${context.id}-${crypto.randomUUID()}`,
      host: context.host,
      sideChannelPort: options.sideChannelPort ?? 0,
      sideChannelHost: options.sideChannelHost ?? "localhost",
      kvLeaseMs: options.kvLeaseMs ?? 30_000,
      blockTokens: context.blockTokens,
    });
  }
  return nixlDecode({
    loadFailurePolicy: options.loadFailurePolicy ?? "fail",
    blockTokens: context.blockTokens,
    localBlocks: context.localBlocks,
    transferTimeoutMs: TRANSFER_TIMEOUT_MS,
    log: context.log,
  });
}
