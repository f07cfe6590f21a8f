/**
 * A vLLM NixlConnector decode engine (`kv_role: kv_consumer`), as the router drives it:
 *
 * - A request whose `kv_transfer_params` say `do_remote_prefill: true` pulls the prompt's KV
 *   from the prefill engine named there (`remote_engine_id`, `remote_request_id`, `remote_host`,
 *   `remote_port`, `remote_block_ids`), only the blocks its own prefix cache lacks (vLLM's
 *   `get_num_new_matched_tokens` counts the local hit first), then decodes. vLLM admits it with
 *   every prompt token but the last computed, and counts all of those as cached
 *   (`num_cached_tokens` is set from the computed tokens once the load is done): its
 *   `usage.prompt_tokens_details.cached_tokens` is `prompt_tokens - 1` whatever the prefill
 *   engine held. So a decode engine's count says nothing about any cache; the router learns
 *   from the prefill leg's.
 * - Params missing a field vLLM needs: vLLM logs "invalid KVTransferParams" and recomputes.
 * - A transfer that fails (side channel unreachable, lease run out, blocks unknown): vLLM's
 *   `kv_load_failure_policy` decides: `fail` (vLLM's default) fails the request, `recompute`
 *   computes the prompt here instead. The simulation also fails a transfer whose blocks are not
 *   this prompt's (another request's params), which a real engine could not tell.
 * Any other request is served whole (a decode engine with `kv_both` serves alone too).
 */
import {
  objectField,
  type PdError,
  type PdPlan,
  type PdRequest,
  type PdRole,
  sameBlocks,
  serverError,
  WHOLE,
} from "./pd-role.ts";
import { callSide } from "./side-server.ts";

export type KvLoadFailurePolicy = "fail" | "recompute";

export interface NixlDecodeOptions {
  readonly loadFailurePolicy: KvLoadFailurePolicy;
  readonly blockTokens: number;
  /** Leading prompt blocks this engine's prefix cache holds. */
  localBlocks(hashes: ArrayLike<number>): number;
  readonly transferTimeoutMs: number;
  log(line: string): void;
}

interface Params {
  engineId: string;
  requestId: string;
  host: string;
  port: number;
  blockIds: number[];
}

/** The params a pull needs, or the name of the first one missing or malformed. */
function readParams(p: Record<string, unknown>): Params | string {
  const { remote_engine_id, remote_request_id, remote_host, remote_port, remote_block_ids } = p;
  if (typeof remote_engine_id !== "string") return "remote_engine_id";
  if (typeof remote_request_id !== "string") return "remote_request_id";
  if (typeof remote_host !== "string" || remote_host === "") return "remote_host";
  if (typeof remote_port !== "number" || !Number.isInteger(remote_port)) return "remote_port";
  if (!Array.isArray(remote_block_ids) || !remote_block_ids.every(Number.isInteger))
    return "remote_block_ids";
  return {
    engineId: remote_engine_id,
    requestId: remote_request_id,
    host: remote_host.includes(":") ? `[${remote_host}]` : remote_host,
    port: remote_port,
    blockIds: remote_block_ids as number[],
  };
}

export function nixlDecode(options: NixlDecodeOptions): PdRole {
  const failed = (request: PdRequest, reason: string): PdPlan | { error: PdError } => {
    if (options.loadFailurePolicy === "recompute") {
      options.log(`request ${request.requestId}: KV load failed (${reason}); recomputing`);
      return WHOLE;
    }
    return serverError(`KV load failed for request ${request.requestId}: ${reason}`);
  };

  async function pull(request: PdRequest, params: Params): Promise<PdPlan | { error: PdError }> {
    const { hashes, promptTokens } = request;
    const partial = promptTokens > hashes.length * options.blockTokens;
    if (params.blockIds.length !== hashes.length + (partial ? 1 : 0))
      return failed(request, "remote_block_ids do not match the prompt's blocks");
    const local = options.localBlocks(hashes);
    const url = `http://${params.host}:${params.port}/read`;
    let reply: Awaited<ReturnType<typeof callSide>>;
    try {
      reply = await callSide(url, {
        method: "POST",
        body: {
          remote_engine_id: params.engineId,
          remote_request_id: params.requestId,
          block_ids: params.blockIds.slice(local),
        },
        timeoutMs: options.transferTimeoutMs,
        signal: request.signal,
      });
    } catch (error) {
      return failed(request, `side channel ${params.host}:${params.port}: ${String(error)}`);
    }
    const got = (reply.body as { hashes?: unknown } | null)?.hashes;
    if (reply.status !== 200 || !Array.isArray(got)) {
      const why = (reply.body as { error?: unknown } | null)?.error;
      return failed(request, `the prefill engine answered ${reply.status}: ${String(why)}`);
    }
    const full = partial ? got.slice(0, -1) : got;
    if (!sameBlocks(hashes, full, local))
      return failed(request, "the blocks read are not this prompt's");
    return { remoteTokens: promptTokens - 1 };
  }

  return {
    endpoint: null,
    async admit(request) {
      const p = objectField(request.body, "kv_transfer_params");
      if (p?.do_remote_prefill !== true) return WHOLE;
      const params = readParams(p);
      if (typeof params === "string") {
        options.log(
          `request ${request.requestId}: invalid KVTransferParams (${params}); recomputing`,
        );
        return WHOLE;
      }
      return pull(request, params);
    },
    close: async () => undefined,
  };
}
