/**
 * The facts in an origin's engine reports: what an engine states and what holds until it states
 * otherwise, its health and its KV capacity. The rest of a report is not kept this way: load is
 * a measurement that fades with age (the load board weighs it from `reportFreshMs` to
 * `reportStaleMs`, and the reporter sends it every interval), and a cache reset or kv event is
 * news whose effect lives in the index, which the router's snapshot keeps.
 *
 * The pool's object and an edge pool's root keep each origin's facts in storage when a batch
 * changes them and state them again when they start, so a restart (an idle eviction, a deploy)
 * no longer brings a `down` or `draining` origin back `up` (issue 24). Only a change is written:
 * the reporter states both facts in every batch (tools/reporter), so that a router which lost
 * them anyway (a new object, lost storage) learns them again within an interval. Pure.
 */
import type { EngineEvent, Health } from "./engine-events.ts";

export interface EngineFacts {
  readonly health: Health | null;
  readonly kvCapacityTokens: number | null;
}

export const NO_FACTS: EngineFacts = { health: null, kvCapacityTokens: null };

/** `facts` after a batch's events, applied in order (the last statement of each wins). */
export function withEvents(facts: EngineFacts, events: readonly EngineEvent[]): EngineFacts {
  let { health, kvCapacityTokens } = facts;
  for (const event of events) {
    if (event.type === "health") health = event.status;
    else if (event.type === "capacity") kvCapacityTokens = event.kvCapacityTokens;
  }
  return { health, kvCapacityTokens };
}

export function sameFacts(a: EngineFacts, b: EngineFacts): boolean {
  return a.health === b.health && a.kvCapacityTokens === b.kvCapacityTokens;
}

/** The events that state `facts` again, for a router or root that starts without them. */
export function factEvents(facts: EngineFacts): EngineEvent[] {
  const events: EngineEvent[] = [];
  if (facts.kvCapacityTokens !== null) {
    events.push({ type: "capacity", kvCapacityTokens: facts.kvCapacityTokens });
  }
  if (facts.health !== null) events.push({ type: "health", status: facts.health });
  return events;
}

/** The batch carries news whose effect the index keeps (a cache reset, kv blocks). */
export function changesIndex(events: readonly EngineEvent[]): boolean {
  return events.some(
    (e) => e.type === "cache-reset" || e.type === "kv-stored" || e.type === "kv-removed",
  );
}
