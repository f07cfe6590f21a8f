/**
 * A vLLM NixlConnector prefill engine (`kv_role: kv_both`, as vLLM's usage guide runs it; the
 * connector does not tell roles apart), as the router drives it
 * (vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py, `request_finished`):
 *
 * - A request whose `kv_transfer_params` say `do_remote_decode: true` runs as usual (the router
 *   sends it `max_tokens: 1`); when it stops on length, the answer carries a top-level
 *   `kv_transfer_params: {do_remote_prefill: true, do_remote_decode: false, remote_block_ids,
 *   remote_engine_id, remote_request_id, remote_host, remote_port, tp_size}` and the prompt's
 *   blocks are held for `kvLeaseMs` (vLLM's `kv_lease_duration`, 30 s) for a decode engine to
 *   read. `remote_host` is what vLLM answers unless told otherwise (`localhost`,
 *   VLLM_NIXL_SIDE_CHANNEL_HOST): the router overwrites it with the prefill origin's address.
 * - The side channel (`POST /read {remote_engine_id, remote_request_id, block_ids}`) hands out
 *   held blocks, once: a read frees the transfer, as the decode's completion notice does in vLLM.
 *   An unknown engine id, request id or block, or a lease run out, is a 404.
 * Any other request is served whole, as vLLM serves one without `kv_transfer_params` (the
 * router's `pd:whole-on-prefill`).
 */
import { objectField, type PdPlan, type PdRequest, type PdRole, WHOLE } from "./pd-role.ts";
import { type SideReply, startSideServer } from "./side-server.ts";

export interface NixlPrefillOptions {
  /** vLLM's `engine_id` (a UUID by default). */
  readonly engineId: string;
  /** Where the side channel listens. */
  readonly host: string;
  readonly sideChannelPort: number;
  /** The `remote_host` answered (VLLM_NIXL_SIDE_CHANNEL_HOST; vLLM's default `localhost`). */
  readonly sideChannelHost: string;
  readonly kvLeaseMs: number;
  readonly blockTokens: number;
}

interface Held {
  readonly blockIds: readonly number[];
  /** Each block's chunk hash; null for a partial last block (no hash names it). */
  readonly hashes: readonly (number | null)[];
  readonly expiresAt: number;
}

/** The transfers a prefill engine holds for decode engines, by request id. */
export class HeldTransfers {
  readonly #held = new Map<string, Held>();
  #nextBlock = 1;

  readonly engineId: string;
  readonly leaseMs: number;

  constructor(engineId: string, leaseMs: number) {
    this.engineId = engineId;
    this.leaseMs = leaseMs;
  }

  get size(): number {
    return this.#held.size;
  }

  /** Hold a finished request's prompt blocks; returns their block ids. */
  hold(requestId: string, hashes: ArrayLike<number>, partialTail: boolean, now: number): number[] {
    this.#prune(now);
    const blocks: (number | null)[] = Array.from(hashes);
    if (partialTail) blocks.push(null);
    const blockIds = blocks.map(() => this.#nextBlock++);
    this.#held.set(requestId, { blockIds, hashes: blocks, expiresAt: now + this.leaseMs });
    return blockIds;
  }

  /** A decode engine reads `blockIds` of a held transfer; the transfer is then freed. */
  read(body: unknown, now: number): SideReply {
    const b = (body ?? {}) as Record<string, unknown>;
    const ids = b.block_ids;
    if (typeof b.remote_request_id !== "string" || !Array.isArray(ids))
      return { status: 400, body: { error: "remote_request_id and block_ids are required" } };
    if (b.remote_engine_id !== this.engineId)
      return { status: 404, body: { error: `no engine ${String(b.remote_engine_id)} here` } };
    this.#prune(now);
    const held = this.#held.get(b.remote_request_id);
    if (!held) return { status: 404, body: { error: "no such transfer (or its lease ran out)" } };
    const hashes: (number | null)[] = [];
    for (const id of ids) {
      const at = held.blockIds.indexOf(id as number);
      if (at < 0) return { status: 404, body: { error: `block ${String(id)} is not held` } };
      hashes.push(held.hashes[at] ?? null);
    }
    this.#held.delete(b.remote_request_id);
    return { status: 200, body: { hashes } };
  }

  #prune(now: number): void {
    for (const [id, held] of this.#held) if (held.expiresAt <= now) this.#held.delete(id);
  }
}

export async function startNixlPrefill(options: NixlPrefillOptions): Promise<PdRole> {
  const held = new HeldTransfers(options.engineId, options.kvLeaseMs);
  const side = await startSideServer(
    options.host,
    options.sideChannelPort,
    async (method, path, body) =>
      method === "POST" && path === "/read"
        ? held.read(body, Date.now())
        : { status: 404, body: { error: `no route ${method} ${path}` } },
  );
  // The simulated engine always stops on length, when vLLM answers params.
  const params = (request: PdRequest) => {
    const partial = request.promptTokens > request.hashes.length * options.blockTokens;
    return {
      do_remote_prefill: true,
      do_remote_decode: false,
      remote_block_ids: held.hold(request.requestId, request.hashes, partial, Date.now()),
      remote_engine_id: options.engineId,
      remote_request_id: request.requestId,
      remote_host: options.sideChannelHost,
      remote_port: side.port,
      tp_size: 1,
    };
  };
  return {
    endpoint: `${side.host}:${side.port}`,
    async admit(request): Promise<PdPlan> {
      const asked = objectField(request.body, "kv_transfer_params");
      if (asked?.do_remote_decode !== true) return WHOLE;
      return {
        remoteTokens: 0,
        finish: async () => ({ fields: { kv_transfer_params: params(request) } }),
      };
    },
    close: () => side.close(),
  };
}
