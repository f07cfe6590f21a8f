import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseCommandLine, UsageError } from "./cli-args.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const scripts = (
  JSON.parse(readFileSync(`${root}package.json`, "utf8")) as {
    scripts: Record<string, string>;
  }
).scripts;
/** Every script that runs a CLI of this repository: `node [flags] <file>.ts`. */
const clis = Object.entries(scripts).filter(([, command]) => /^node .*\.ts$/.test(command));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The script's command with `arg` appended, as `npm run <name> -- <arg>` runs it. */
function run(command: string, arg: string): Promise<Run> {
  const [, ...args] = command.split(" ");
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...args, arg],
      { cwd: root, timeout: 60_000 },
      (error, stdout, stderr) =>
        done({ code: error ? (error.code as number | null) : 0, stdout, stderr }),
    );
  });
}

describe("parseCommandLine", () => {
  const options = { seed: { type: "string" }, once: { type: "boolean" } } as const;

  it("parses strictly what the CLI declares", () => {
    const { values } = parseCommandLine({ args: ["--seed", "2", "--once"], options });
    expect(values).toEqual({ seed: "2", once: true });
  });

  it.each([
    [["--bogus"], "Unknown option '--bogus'"],
    [["--seed"], "Option '--seed <value>' argument missing"],
    [["--once=yes"], "Option '--once' does not take an argument"],
    [["stray"], "Unexpected argument 'stray'"],
  ])("refuses %j with a UsageError naming it, in one line", (args, message) => {
    expect(() => parseCommandLine({ args, options })).toThrow(UsageError);
    expect(() => parseCommandLine({ args, options })).toThrow(new UsageError(message));
  });
});

// Each CLI started twice: they must answer before doing any work (seconds, not a replay).
describe.concurrent("every CLI in package.json (issue 24: --help and typos were stack traces)", () => {
  it("covers the CLIs the issue names", () => {
    const names = clis.map(([name]) => name);
    for (const name of [
      "start",
      "bench",
      "bench:core",
      "bench:overload",
      "loadtest",
      "reporter",
      "engine",
    ]) {
      expect(names).toContain(name);
    }
  });

  it.each(clis)(
    "%s: --help prints the usage and exits 0; --bogus one line naming it, exit 2",
    async (name, command) => {
      const help = await run(command, "--help");
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/^usage: /);
      const bogus = await run(command, "--bogus");
      expect(bogus.code, bogus.stderr).toBe(2);
      expect(bogus.stderr).toBe(`${name}: Unknown option '--bogus' (--help lists the options)\n`);
    },
    120_000,
  );
});
