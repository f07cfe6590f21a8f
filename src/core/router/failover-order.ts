/**
 * Failover order: the origins to try, in turn, if the chosen one fails before its first byte,
 * as many as the retry budget can use. The policy's ranking comes first (its own preference,
 * e.g. the next-best cache match), then the other eligible origins, fewest requests in flight
 * first. Pure, over the very views the policy decided on.
 */
import type { Position } from "../origin-indexes.ts";
import type { OriginView } from "../policies/policy.ts";

/**
 * Ids of up to `budget` eligible origins other than `chosen`; `ranking` is the policy's
 * preference order (positions, like `chosen`), if it gave one.
 */
export function failoverOrder(
  origins: readonly OriginView[],
  chosen: Position,
  ranking: readonly number[] | undefined,
  budget: number,
): string[] {
  const out: string[] = [];
  const taken = new Set<number>([chosen]);
  const take = (i: number) => {
    taken.add(i);
    out.push((origins[i] as OriginView).id);
  };
  for (const i of ranking ?? []) {
    if (out.length >= budget) return out;
    if (!taken.has(i) && origins[i]?.eligible) take(i);
  }
  while (out.length < budget) {
    let best = -1;
    for (let i = 0; i < origins.length; i++) {
      const o = origins[i] as OriginView;
      if (taken.has(i) || !o.eligible) continue;
      if (best < 0 || o.outstanding < (origins[best] as OriginView).outstanding) best = i;
    }
    if (best < 0) break;
    take(best);
  }
  return out;
}
