/**
 * The command line of every CLI in package.json's scripts (`npm start`, the benches, the load
 * test, the reporter, the engine): node:util's `parseArgs`, strict and without positionals, plus
 * the two answers a user expects before any work starts. `--help` prints the CLI's usage and
 * exits 0; a usage error (an unknown option or one this CLI does not take, a missing value, a
 * stray argument, a bad value) prints one line naming it and exits 2, never a stack trace.
 */
import { type ParseArgsOptionsConfig, parseArgs } from "node:util";

/** A bad command line; `message` names the option and the reason. */
export class UsageError extends Error {}

/** `--help` (or `-h`) was given: the CLI prints its usage instead of running. */
class HelpRequest extends Error {}

/** Node's own errors for a command line it refuses (ERR_PARSE_ARGS_*). */
function isParseArgsError(error: unknown): error is Error {
  return (
    error instanceof Error &&
    String((error as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS_")
  );
}

/**
 * `args` parsed against `options`, as parseArgs returns them (`{ values }`). Throws a UsageError
 * for what parseArgs refuses (its message's first sentence, which names the option: "Unknown
 * option '--bogus'"), a HelpRequest for `--help`.
 */
export function parseCommandLine<const T extends ParseArgsOptionsConfig>(config: {
  args: readonly string[];
  options: T;
}) {
  const { args, options } = config;
  if (args.includes("--help") || args.includes("-h")) throw new HelpRequest();
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: false });
  } catch (error) {
    if (isParseArgsError(error)) throw new UsageError(error.message.split(". ")[0]);
    throw error;
  }
}

/** For a usage error or a help request: print what it calls for and give the exit code. */
function usageExit(name: string, usage: string, error: unknown): number | undefined {
  if (error instanceof HelpRequest) {
    console.log(usage);
    return 0;
  }
  if (error instanceof UsageError) {
    console.error(`${name}: ${error.message} (--help lists the options)`);
    return 2;
  }
  return undefined;
}

/**
 * Parse this process's command line for a CLI that parses at its top level: on `--help` or a
 * usage error it prints and exits here, before the caller starts anything.
 */
export function commandLine<const T extends ParseArgsOptionsConfig>(
  name: string,
  usage: string,
  config: { options: T },
) {
  try {
    return parseCommandLine({ args: process.argv.slice(2), options: config.options });
  } catch (error) {
    const code = usageExit(name, usage, error);
    if (code === undefined) throw error;
    process.exit(code);
  }
}

/**
 * Run a CLI's main, which parses with parseCommandLine and may throw a UsageError later (a bad
 * value found while checking options): help exits 0, a usage error 2, any other error 1.
 */
export function runCli(name: string, usage: string, main: () => Promise<void> | void): void {
  Promise.resolve()
    .then(main)
    .catch((error: unknown) => {
      const code = usageExit(name, usage, error);
      if (code === undefined) console.error(error);
      process.exitCode = code ?? 1;
    });
}
