/**
 * The overload benchmark's tables (benchmarks print tables) and its targets (issue 13):
 * one row per run for the pool, one per run and priority for admitted TTFT, one per key of the
 * multi-key runs, then each target met or missed.
 */
import { formatTable } from "../../../sim/report/table.ts";
import type { OverloadRun } from "./overload-run.ts";

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const fixed = (x: number, d = 2) => x.toFixed(d);
const int = (x: number) => Math.round(x).toLocaleString("en-US");
const adm = (r: OverloadRun) => (r.admission ? "on" : "off");

export function poolTable(runs: readonly OverloadRun[]): string {
  return formatTable(
    runs.map((r) => {
      const f = r.figures;
      return [
        r.scenario,
        String(r.load),
        adm(r),
        fixed(f.offeredRps),
        fixed(f.goodputRps),
        pct(f.goodputVsCapacity),
        fixed(f.servedRps),
        pct(f.shedRate),
        int(f.shedAnswerMs.p50),
        int(f.shedAnswerMs.max),
        fixed(r.hitRate, 3),
        fixed(r.utilisation, 2),
      ];
    }),
    {
      header: [
        "scenario",
        "load",
        "adm",
        "offered/s",
        "goodput/s",
        "/capacity",
        "served/s",
        "shed",
        "shed in p50",
        "max ms",
        "hit",
        "busy",
      ],
    },
  );
}

export function priorityTable(runs: readonly OverloadRun[]): string {
  const rows = runs.flatMap((r) =>
    Object.entries(r.figures.priorities).map(([priority, p]) => [
      r.scenario,
      String(r.load),
      adm(r),
      priority,
      fixed(p.goodputRps),
      pct(p.shedRate),
      pct(p.failedRate),
      int(p.timeouts),
      int(p.ttftMs.p50),
      int(p.ttftMs.p90),
      int(p.ttftMs.p99),
      int(p.queueWaitMs.p90),
      p.jain === null ? "-" : fixed(p.jain, 3),
    ]),
  );
  return formatTable(rows, {
    header: [
      "scenario",
      "load",
      "adm",
      "priority",
      "goodput/s",
      "shed",
      "unserved",
      "gave up",
      "TTFT p50",
      "p90",
      "p99 ms",
      "wait p90",
      "Jain",
    ],
  });
}

export function keyTable(runs: readonly OverloadRun[]): string {
  const rows = runs
    .filter((r) => r.figures.keys.length > 1)
    .flatMap((r) =>
      r.figures.keys.map((k) => [
        r.scenario,
        String(r.load),
        adm(r),
        k.key,
        k.priority,
        fixed(k.offeredRps),
        fixed(k.goodputRps),
        pct(k.goodputShare),
      ]),
    );
  return formatTable(rows, {
    header: ["scenario", "load", "adm", "key", "priority", "offered/s", "goodput/s", "share"],
  });
}

/**
 * Each target of issue 13 this run can judge: a line saying met or missed, and why. They are
 * stated for the whole conversation trace, whose capacity goodput is measured against: on the
 * first `limit` requests (`--limit`), another workload, one line says none applies.
 */
export function overloadTargets(
  runs: readonly OverloadRun[],
  objectiveMs: number,
  limit: number | undefined,
): string[] {
  if (limit !== undefined) {
    return [
      `none with --limit ${limit}: the targets, and the capacity goodput is a share of, ` +
        "are the whole conversation trace's",
    ];
  }
  const on = (scenario: string, load: number) =>
    runs.find((r) => r.scenario === scenario && r.load === load && r.admission);
  const mark = (ok: boolean) => (ok ? "met   " : "MISSED");
  const lines: string[] = [];
  const one = on("one-key", 1.5);
  if (one) {
    const f = one.figures;
    const p90 = f.priorities.interactive?.ttftMs.p90 ?? Number.NaN;
    lines.push(
      `${mark(p90 <= objectiveMs)} one-key load 1.5: admitted p90 TTFT ${int(p90)} ms <= ${objectiveMs}`,
    );
    lines.push(
      `${mark(f.goodputVsCapacity >= 0.9)} one-key load 1.5: goodput ${pct(f.goodputVsCapacity)} of capacity >= 90%`,
    );
    const queueMs = one.admission?.queueTimeoutMs ?? 0;
    lines.push(
      `${mark(f.shedAnswerMs.max <= queueMs)} one-key load 1.5: sheds answered without engine time ` +
        `(p50 ${int(f.shedAnswerMs.p50)} ms, max ${int(f.shedAnswerMs.max)} ms <= queueTimeoutMs ${queueMs})`,
    );
  }
  const pri = on("priorities", 1.5);
  if (pri) {
    const shed = pri.figures.priorities.interactive?.shedRate ?? Number.NaN;
    const batch = pri.figures.priorities.batch?.shedRate ?? Number.NaN;
    lines.push(
      `${mark(shed <= 0.01)} priorities load 1.5: interactive shed ${pct(shed)} <= 1% (batch ${pct(batch)})`,
    );
  }
  const two = on("two-keys", 2);
  if (two) {
    const least = Math.min(...two.figures.keys.map((k) => k.goodputShare));
    lines.push(
      `${mark(least >= 0.45)} two-keys load 2.0: each key's goodput share >= 45% (least ${pct(least)})`,
    );
  }
  return lines;
}
