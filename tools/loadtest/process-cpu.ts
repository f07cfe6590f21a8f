/**
 * CPU time the local stack spends, per process, read from Linux's /proc: what a target costs
 * the machine per answered request, which on a shared machine is a steadier figure than
 * requests/s (another process's load changes how fast a request is served, not how much CPU it
 * takes). `wrangler dev` runs the Worker and its objects in `workerd`, beside wrangler's own Node
 * processes (its proxy, and the devtools connection every console line of the Worker travels
 * over: about 1.4 ms of CPU per request logged, measured for issue 12). Elsewhere than Linux the
 * readings are null and the table leaves the columns empty.
 */
import { readdirSync, readFileSync } from "node:fs";

/** One process's line of /proc/PID/stat, the fields used here. */
export interface ProcStat {
  pid: number;
  command: string;
  processGroup: number;
  /** User plus system CPU time, in clock ticks. */
  cpuTicks: number;
}

/** Parse /proc/PID/stat (the command may hold spaces and parentheses: it ends at the last ')'). */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  // Fields after the command, from field 3 (state): pgrp is field 5, utime 14, stime 15.
  const rest = text.slice(close + 2).split(" ");
  const pid = Number(text.slice(0, open).trim());
  const processGroup = Number(rest[2]);
  const cpuTicks = Number(rest[11]) + Number(rest[12]);
  if (![pid, processGroup, cpuTicks].every(Number.isFinite)) return null;
  return { pid, command: text.slice(open + 1, close), processGroup, cpuTicks };
}

/** Linux's USER_HZ, which every mainstream kernel sets at 100 ticks a second. */
const TICK_MS = 10;

/**
 * CPU ms so far of the processes in `processGroup`, by command (`workerd`, `node`...); null
 * where there is no /proc.
 */
export function groupCpuMs(processGroup: number): Record<string, number> | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  const byCommand: Record<string, number> = {};
  for (const pid of pids) {
    let stat: ProcStat | null;
    try {
      stat = parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      continue; // exited meanwhile
    }
    if (stat?.processGroup !== processGroup) continue;
    byCommand[stat.command] = (byCommand[stat.command] ?? 0) + stat.cpuTicks * TICK_MS;
  }
  return byCommand;
}

/** CPU ms each command spent between two readings (commands new in `after` count from zero). */
export function cpuSpent(
  before: Record<string, number> | null,
  after: Record<string, number> | null,
): Record<string, number> | null {
  if (!before || !after) return null;
  return Object.fromEntries(
    Object.entries(after).map(([command, ms]) => [command, ms - (before[command] ?? 0)]),
  );
}
