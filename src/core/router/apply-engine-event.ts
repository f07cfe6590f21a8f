/**
 * Where each kind of engine event (engine-events.ts) lands in one origin's state: load, health
 * and measured prefill speed on the load board (the speed also in the speed learner, which
 * weighs it strongly: speed-learner.ts), a reported KV size in the capacity learner, a cache
 * reset and kv events in the index (kv events only when it is fed by them, index-feed.ts). The
 * switch is exhaustive, so a new event kind does not type-check until it has a place.
 */
import type { EngineEvent } from "../engine-events.ts";
import type { Slot } from "../origin-indexes.ts";
import { drainAtLearnedSpeeds, type RouterParts } from "./router-parts.ts";

export function applyEngineEvent(
  parts: RouterParts,
  slot: Slot,
  event: EngineEvent,
  now: number,
): void {
  switch (event.type) {
    case "load":
      parts.board.report(slot, event, now);
      break;
    case "capacity":
      parts.capacity.report(slot, event.kvCapacityTokens);
      break;
    case "cache-reset":
      parts.claims.forget(slot);
      break;
    case "health":
      parts.board.setHealth(slot, event.status);
      break;
    case "prefill-rate":
      parts.board.reportPrefillRate(slot, event, now);
      if (parts.speeds.measure(slot, event.tokensPerSecond, event.tokens, now))
        drainAtLearnedSpeeds(parts, now);
      break;
    case "kv-stored":
    case "kv-removed":
      parts.claims.applyKvEvent(slot, event, now);
      break;
    default: {
      const unknown: never = event;
      throw new Error(`unknown event ${JSON.stringify(unknown)}`);
    }
  }
}
