/**
 * A pool's load board options (load-board.ts), from its settings and its policies: the board
 * keeps in-flight prompt chunks only where a live or shadow policy reads them. Here rather than
 * beside the board, so the board imports no settings (settings import the policies, whose view
 * holds the board's `EngineLoad`).
 */
import type { LoadBoardOptions } from "../load-board/load-board.ts";
import { usesActiveChunks } from "../policies/index.ts";
import type { PoolSettings } from "../settings/settings-schema.ts";

export function boardOptions(pool: PoolSettings): LoadBoardOptions {
  return {
    leaseMs: pool.leaseMs,
    failureThreshold: pool.circuit.failureThreshold,
    cooldownMs: pool.circuit.cooldownMs,
    reportFreshMs: pool.reportFreshMs,
    reportStaleMs: pool.reportStaleMs,
    trackActiveChunks: usesActiveChunks(pool),
  };
}
