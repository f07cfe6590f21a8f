/**
 * What edge coordination costs on a Durable Objects bill (pricing cited in
 * docs/architecture.md): which of the edge front's counted calls are billed object requests,
 * and at what rate.
 */
import type { EdgeCounters } from "./edge-counters.ts";

/** Incoming WebSocket messages bill at 20:1 (Durable Objects pricing). */
export const MESSAGE_BILLING = 1 / 20;

/**
 * A bill's object requests: a sync (RPC), a socket's connect and a root exchange one each, a
 * message up a socket 1/20, a message down free.
 */
export function billedRequests(c: EdgeCounters): number {
  return c.answeredSyncs + c.connects + c.uploads * MESSAGE_BILLING + c.rootExchanges;
}
