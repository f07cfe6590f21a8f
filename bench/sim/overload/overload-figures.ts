/**
 * An overload replay reduced to what the issue asks of it (bench/sim/README.md, "Overload"):
 *
 * - goodput: requests served within the objective (their client's time to first token, the
 *   router's queue included, at most `objectiveMs`), per second of the arrival window, also as
 *   a share of the pool's capacity at that objective;
 * - shed: attempts answered 429/503, as a share of attempts, and how long each took to be
 *   told (0 for a shed at arrival); requests never served after every retry;
 * - admitted TTFT p50/p90/p99 per priority, over the requests served (the served attempt's,
 *   from the moment it reached the router);
 * - fairness: Jain's index over each priority's keys, of each key's goodput over its max-min
 *   fair share of that priority's goodput (water-filling over the keys' offered rates), so a
 *   key that asks for less than an equal split is not counted as treated unfairly; 1 is fair,
 *   1/n is one key taking everything (Jain, Chiu and Hawe 1984).
 */

import type { FrontRecord } from "../../../sim/fleet/client-front.ts";
import { quantile, round } from "../../../sim/report/stats.ts";
import type { Workload } from "../../../sim/workload/workload.ts";
import type { Priority } from "../../../src/core/route-request.ts";
import type { Tenant } from "./tenants.ts";

export interface Ttft {
  p50: number;
  p90: number;
  p99: number;
}

export interface PriorityFigures {
  requests: number;
  attempts: number;
  /** Attempts shed (429/503) / attempts. */
  shedRate: number;
  /** Requests never served (every attempt shed or given up) / requests. */
  failedRate: number;
  /** Attempts whose client gave up waiting for a first token. */
  timeouts: number;
  goodputRps: number;
  /** Over the requests served: the served attempt's TTFT, router queue included. */
  ttftMs: Ttft;
  /** Over the requests served: time spent waiting at the router. */
  queueWaitMs: Ttft;
  /** Jain's index over this priority's keys (null with one key). */
  jain: number | null;
}

export interface KeyFigures {
  key: string;
  priority: Priority;
  offeredRps: number;
  goodputRps: number;
  /** This key's share of the goodput of all keys. */
  goodputShare: number;
}

export interface OverloadFigures {
  offeredRps: number;
  goodputRps: number;
  /** goodput / the pool's capacity at the objective. */
  goodputVsCapacity: number;
  /** Requests served (first token), any TTFT, per second of the arrival window. */
  servedRps: number;
  shedRate: number;
  /** How long a shed attempt took to be answered. */
  shedAnswerMs: { p50: number; p99: number; max: number };
  shedByReason: Record<string, number>;
  priorities: Partial<Record<Priority, PriorityFigures>>;
  keys: KeyFigures[];
}

export interface FiguresInput {
  w: Workload;
  record: FrontRecord;
  tenants: readonly Tenant[];
  /** Each request's tenant. */
  tenantOf: Uint8Array;
  objectiveMs: number;
  capacityRps: number;
}

const ms = (x: number) => round(x, 1);

function ttftOf(values: number[]): Ttft {
  const sorted = Float64Array.from(values).sort();
  return {
    p50: ms(quantile(sorted, 0.5)),
    p90: ms(quantile(sorted, 0.9)),
    p99: ms(quantile(sorted, 0.99)),
  };
}

function listOf(map: Map<Priority, number[]>, priority: Priority): number[] {
  let list = map.get(priority);
  if (!list) {
    list = [];
    map.set(priority, list);
  }
  return list;
}

/** Max-min fair shares of `total` among demands (water-filling). */
export function maxMinShares(demands: readonly number[], total: number): number[] {
  const shares = demands.map(() => 0);
  let left = total;
  let open = demands.map((_, k) => k);
  while (open.length > 0 && left > 1e-12) {
    const each = left / open.length;
    const satisfied = open.filter((k) => (demands[k] as number) - (shares[k] as number) <= each);
    if (satisfied.length === 0) {
      for (const k of open) shares[k] = (shares[k] as number) + each;
      break;
    }
    for (const k of satisfied) {
      left -= (demands[k] as number) - (shares[k] as number);
      shares[k] = demands[k] as number;
    }
    open = open.filter((k) => !satisfied.includes(k));
  }
  return shares;
}

/** Jain's fairness index of `x`: (sum x)^2 / (n sum x^2); 1 when all are equal. */
export function jainIndex(x: readonly number[]): number {
  const sum = x.reduce((a, b) => a + b, 0);
  const squares = x.reduce((a, b) => a + b * b, 0);
  return squares > 0 ? (sum * sum) / (x.length * squares) : 1;
}

export function overloadFigures(input: FiguresInput): OverloadFigures {
  const { w, record, tenants, tenantOf, objectiveMs, capacityRps } = input;
  const windowS = Math.max(1e-9, ((w.arrivalMs[w.size - 1] ?? 0) - (w.arrivalMs[0] ?? 0)) / 1000);
  const perKey = tenants.map(() => ({ requests: 0, good: 0 }));
  const perPriority = new Map<Priority, { attempts: number; shed: number; failed: number }>();
  const ttft = new Map<Priority, number[]>();
  const waits = new Map<Priority, number[]>();
  const timeouts = new Map<Priority, number>();
  let served = 0;
  for (let i = 0; i < w.size; i++) {
    const t = tenantOf[i] as number;
    const { priority } = tenants[t] as Tenant;
    const p = perPriority.get(priority) ?? { attempts: 0, shed: 0, failed: 0 };
    perPriority.set(priority, p);
    const key = perKey[t] as { requests: number; good: number };
    key.requests++;
    p.attempts += record.attempts[i] as number;
    timeouts.set(priority, (timeouts.get(priority) ?? 0) + (record.timeouts[i] as number));
    if (record.served[i] !== 1) {
      p.failed++;
      continue;
    }
    served++;
    const first = record.ttftMs[i] as number;
    if (first <= objectiveMs) key.good++;
    listOf(ttft, priority).push(first);
    listOf(waits, priority).push(record.waitedMs[i] as number);
  }
  const shedByReason: Record<string, number> = {};
  const shedAfter: number[] = [];
  for (const s of record.shed) {
    shedByReason[s.reason] = (shedByReason[s.reason] ?? 0) + 1;
    shedAfter.push(s.afterMs);
    const p = perPriority.get((tenants[tenantOf[s.i] as number] as Tenant).priority);
    if (p) p.shed++;
  }
  const good = perKey.reduce((a, k) => a + k.good, 0);
  const keys: KeyFigures[] = tenants.map((tenant, t) => ({
    key: tenant.key,
    priority: tenant.priority,
    offeredRps: round((perKey[t]?.requests ?? 0) / windowS, 3),
    goodputRps: round((perKey[t]?.good ?? 0) / windowS, 3),
    goodputShare: round(good > 0 ? (perKey[t]?.good ?? 0) / good : 0, 4),
  }));
  const priorities: Partial<Record<Priority, PriorityFigures>> = {};
  for (const [priority, p] of perPriority) {
    const mine = tenants.flatMap((tenant, t) => (tenant.priority === priority ? [t] : []));
    const goodput = mine.reduce((a, t) => a + (perKey[t]?.good ?? 0), 0);
    const shares = maxMinShares(
      mine.map((t) => perKey[t]?.requests ?? 0),
      goodput,
    );
    const normalised = mine.map((t, k) => (perKey[t]?.good ?? 0) / (shares[k] as number) || 0);
    const requests = mine.reduce((a, t) => a + (perKey[t]?.requests ?? 0), 0);
    priorities[priority] = {
      requests,
      attempts: p.attempts,
      shedRate: round(p.attempts > 0 ? p.shed / p.attempts : 0, 4),
      failedRate: round(requests > 0 ? p.failed / requests : 0, 4),
      timeouts: timeouts.get(priority) ?? 0,
      goodputRps: round(goodput / windowS, 3),
      ttftMs: ttftOf(ttft.get(priority) ?? []),
      queueWaitMs: ttftOf(waits.get(priority) ?? []),
      jain: mine.length > 1 ? round(jainIndex(normalised), 4) : null,
    };
  }
  const attempts = record.attempts.reduce((a, b) => a + b, 0);
  const sortedAfter = Float64Array.from(shedAfter).sort();
  return {
    offeredRps: round(w.size / windowS, 3),
    goodputRps: round(good / windowS, 3),
    goodputVsCapacity: round(capacityRps > 0 ? good / windowS / capacityRps : 0, 4),
    servedRps: round(served / windowS, 3),
    shedRate: round(attempts > 0 ? record.shed.length / attempts : 0, 4),
    shedAnswerMs: {
      p50: ms(quantile(sortedAfter, 0.5)),
      p99: ms(quantile(sortedAfter, 0.99)),
      max: ms(quantile(sortedAfter, 1)),
    },
    shedByReason,
    priorities,
    keys,
  };
}
