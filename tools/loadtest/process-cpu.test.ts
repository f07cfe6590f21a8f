import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cpuSpent, groupCpuMs, parseProcStat } from "./process-cpu.ts";

describe("process CPU from /proc", () => {
  it("parses a stat line whose command holds spaces and parentheses", () => {
    const line =
      "4242 (work (er) d) S 4200 4201 4201 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 9 0 1 2 3";
    expect(parseProcStat(line)).toEqual({
      pid: 4242,
      command: "work (er) d",
      processGroup: 4201,
      cpuTicks: 1234 + 567,
    });
  });

  it("refuses a line that is not a stat line", () => {
    expect(parseProcStat("no parentheses here")).toBeNull();
  });

  it("spent: after minus before per command, a new command from zero, null without readings", () => {
    expect(cpuSpent({ workerd: 100, node: 50 }, { workerd: 180, node: 50, sh: 10 })).toEqual({
      workerd: 80,
      node: 0,
      sh: 10,
    });
    expect(cpuSpent(null, { workerd: 1 })).toBeNull();
  });

  it.runIf(process.platform === "linux")("reads this process's own group", () => {
    const spin = Date.now() + 50;
    while (Date.now() < spin) {
      // burn CPU so this group has some
    }
    const group = parseProcStat(readFileSync("/proc/self/stat", "utf8"))?.processGroup ?? -1;
    const own = groupCpuMs(group);
    expect(Object.values(own ?? {}).reduce((s, v) => s + v, 0)).toBeGreaterThan(0);
  });
});
