/**
 * `npm run bench:edge`'s summaries and tables: per configuration, the paired ratios over seeds
 * (edge / synchronous, mean and 95% CI, paired-stats.ts) beside edge coordination's own figures,
 * and the protocol's figures at pool rates (edge-rate.ts). Plain functions of the results, so
 * the JSON and the printed tables say the same thing.
 */
import { round } from "../../../sim/report/stats.ts";
import { formatTable } from "../../../sim/report/table.ts";
import type { SeedPair } from "./edge-pair.ts";
import type { RateFigures } from "./edge-rate.ts";
import { formatRatio, type RatioStats, ratioStats } from "./paired-stats.ts";

export interface PairSummary {
  label: string;
  seeds: number;
  requests: number;
  rateRps: number;
  hitRate: { sync: number; edge: number; ratio: RatioStats };
  ttftP50: { sync: number; edge: number; ratio: RatioStats };
  ttftP99: { sync: number; edge: number; ratio: RatioStats };
  ttftMean: RatioStats;
  /** Worst 10 s window's busiest origin over the mean, worst seed. */
  imbalance10s: { sync: number; edge: number };
  /** A hot prefix's largest share of one origin over its overflow bound (worst window, worst seed). */
  hotOverBound: { sync: number; edge: number };
  callsPerRequest: number;
  /** Billed object requests per warm isolate-second (edge-figures.ts). */
  billPerIsolateSecond: number;
  peakSyncsPerSecond: number;
  requestBytes: number;
  answerBytes: { mean: number; p99: number };
  viewAgeMs: { p50: number; p99: number };
  replicaKiB: number;
  failed: number;
  outage: {
    failed: number;
    hitRatio: RatioStats;
    objectHitRatio: RatioStats;
    p99Ratio: RatioStats;
    afterHitRatio: RatioStats;
  } | null;
}

const avg = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const max = (xs: readonly number[]) => Math.max(0, ...xs);

export function summarisePairs(label: string, pairs: readonly SeedPair[]): PairSummary {
  const s = pairs.map((p) => p.sync);
  const e = pairs.map((p) => p.edge);
  const x = pairs.map((p) => p.edge.edge);
  const o = pairs.flatMap((p) => (p.outage ? [p.outage] : []));
  return {
    label,
    seeds: pairs.length,
    requests: pairs[0]?.requests ?? 0,
    rateRps: round(avg(pairs.map((p) => p.rateRps)), 2),
    hitRate: {
      sync: round(avg(s.map((r) => r.hitRate)), 4),
      edge: round(avg(e.map((r) => r.hitRate)), 4),
      ratio: ratioStats(
        e.map((r) => r.hitRate),
        s.map((r) => r.hitRate),
      ),
    },
    ttftP50: {
      sync: round(avg(s.map((r) => r.ttftMs.p50)), 1),
      edge: round(avg(e.map((r) => r.ttftMs.p50)), 1),
      ratio: ratioStats(
        e.map((r) => r.ttftMs.p50),
        s.map((r) => r.ttftMs.p50),
      ),
    },
    ttftP99: {
      sync: round(avg(s.map((r) => r.ttftMs.p99)), 1),
      edge: round(avg(e.map((r) => r.ttftMs.p99)), 1),
      ratio: ratioStats(
        e.map((r) => r.ttftMs.p99),
        s.map((r) => r.ttftMs.p99),
      ),
    },
    ttftMean: ratioStats(
      e.map((r) => r.ttftMeanMs),
      s.map((r) => r.ttftMeanMs),
    ),
    imbalance10s: {
      sync: max(s.map((r) => r.imbalance10s.max)),
      edge: max(e.map((r) => r.imbalance10s.max)),
    },
    hotOverBound: {
      sync: max(s.map((r) => r.hotShare.maxOverBound)),
      edge: max(e.map((r) => r.hotShare.maxOverBound)),
    },
    callsPerRequest: round(avg(x.map((f) => f.callsPerRequest)), 4),
    billPerIsolateSecond: round(avg(x.map((f) => f.bill.perWarmIsolateSecond)), 4),
    peakSyncsPerSecond: max(x.map((f) => f.peakSyncsPerSecond)),
    requestBytes: Math.round(avg(x.map((f) => f.requestBytes.mean))),
    answerBytes: {
      mean: Math.round(avg(x.map((f) => f.answerBytes.mean))),
      p99: max(x.map((f) => f.answerBytes.p99)),
    },
    viewAgeMs: {
      p50: round(avg(x.map((f) => f.viewAgeMs.p50)), 1),
      p99: max(x.map((f) => f.viewAgeMs.p99)),
    },
    replicaKiB: Math.round(max(x.map((f) => f.replica.indexBytes)) / 1024),
    failed: e.reduce((n, r) => n + r.failed + r.fallbacks, 0),
    outage:
      o.length === 0
        ? null
        : {
            failed: o.reduce((n, r) => n + r.edgeFailed, 0),
            hitRatio: ratioStats(
              o.map((r) => r.edge.hitRate),
              o.map((r) => r.sync.hitRate),
            ),
            objectHitRatio: ratioStats(
              o.map((r) => r.object.hitRate),
              o.map((r) => r.sync.hitRate),
            ),
            p99Ratio: ratioStats(
              o.map((r) => r.edge.ttftMs.p99),
              o.map((r) => r.sync.ttftMs.p99),
            ),
            afterHitRatio: ratioStats(
              o.map((r) => r.after.edge.hitRate),
              o.map((r) => r.after.sync.hitRate),
            ),
          },
  };
}

/** The paired table: one row per configuration. */
export function pairTable(rows: readonly PairSummary[]): string {
  const quality = formatTable(
    rows.map((r) => [
      r.label,
      String(r.seeds),
      `${r.hitRate.sync.toFixed(3)}/${r.hitRate.edge.toFixed(3)}`,
      formatRatio(r.hitRate.ratio),
      formatRatio(r.ttftP50.ratio),
      formatRatio(r.ttftP99.ratio),
      formatRatio(r.ttftMean),
      `${r.imbalance10s.sync.toFixed(2)}/${r.imbalance10s.edge.toFixed(2)}`,
      `${r.hotOverBound.sync.toFixed(2)}/${r.hotOverBound.edge.toFixed(2)}`,
    ]),
    {
      header: [
        "configuration",
        "seeds",
        "hit sync/edge",
        "hit ratio [95% CI]",
        "TTFT p50 ratio",
        "TTFT p99 ratio",
        "TTFT mean ratio",
        "imbal. 10s s/e",
        "hot/bound s/e",
      ],
    },
  );
  const protocol = formatTable(
    rows.map((r) => [
      r.label,
      r.rateRps.toFixed(1),
      r.callsPerRequest.toFixed(3),
      r.billPerIsolateSecond.toFixed(3),
      String(r.peakSyncsPerSecond),
      String(r.requestBytes),
      `${r.answerBytes.mean}/${r.answerBytes.p99}`,
      `${r.viewAgeMs.p50}/${r.viewAgeMs.p99}`,
      String(r.replicaKiB),
      String(r.failed),
    ]),
    {
      header: [
        "configuration",
        "pool req/s",
        "billed/req",
        "billed/s/warm isolate",
        "peak syncs/s/coord",
        "sync up B",
        "answer B mean/p99",
        "view age p50/p99 ms",
        "replica KiB",
        "failed",
      ],
    },
  );
  const outages = rows.filter((r) => r.outage);
  const outage =
    outages.length === 0
      ? ""
      : `\n\n${formatTable(
          outages.map((r) => {
            const o = r.outage as NonNullable<PairSummary["outage"]>;
            return [
              r.label,
              String(o.failed),
              formatRatio(o.hitRatio),
              formatRatio(o.objectHitRatio),
              formatRatio(o.p99Ratio),
              formatRatio(o.afterHitRatio),
            ];
          }),
          {
            header: [
              "coordinator outage",
              "failed",
              "edge hit ratio",
              "object-mode hit ratio",
              "edge TTFT p99 ratio",
              "next minute hit ratio",
            ],
          },
        )}`;
  return `${quality}\n\n${protocol}${outage}`;
}

/** The protocol at pool rates: one row per rate and S. */
export function rateTable(rows: readonly (RateFigures & { coordinators: number })[]): string {
  return formatTable(
    rows.map((r) => [
      String(r.rateRps),
      String(r.coordinators),
      r.warmCallsPerRequest.toFixed(4),
      String(r.warmPeakSyncsPerSecond),
      String(r.requestBytes.mean),
      `${r.answerBytes.mean}/${r.answerBytes.p99}`,
      `${r.viewAgeMs.p50}/${r.viewAgeMs.p99}`,
      String(Math.round(r.replica.indexBytes / 1024)),
    ]),
    {
      header: [
        "pool req/s",
        "S",
        "calls/req",
        "peak syncs/s/coord",
        "sync up B",
        "answer B mean/p99",
        "view age p50/p99 ms",
        "replica KiB",
      ],
    },
  );
}
