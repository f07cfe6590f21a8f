/**
 * The last lines a child process printed (stdout and stderr together), kept to show when it
 * fails to start, each line also handed to `log` as it comes. Used by the tools that start
 * servers as children: wrangler dev and llama-server.
 */
import type { ChildProcess } from "node:child_process";

/** Collects `child`'s output lines, keeping the last `keep`; the array fills as it prints. */
export function outputTail(
  child: ChildProcess,
  keep: number,
  log?: (line: string) => void,
): string[] {
  const lines: string[] = [];
  const collect = (data: Buffer) => {
    for (const line of data.toString().split("\n")) {
      if (!line.trim()) continue;
      lines.push(line);
      if (lines.length > keep) lines.shift();
      log?.(line);
    }
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  return lines;
}
