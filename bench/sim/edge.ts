/**
 * `npm run bench:edge -- [options]`: edge coordination against the synchronous router, paired
 * (same seed, same arrivals), over `--seeds` seeds: hit rate, TTFT, balance and the protocol's
 * costs, with a coordinator outage; `--sweep` varies I, C or the sync interval; `--rate` replays
 * the protocol alone at pool rates no simulated fleet serves. Prints the tables and writes the
 * JSON (bench/results/edge-<trace>-<origins>o[-sweep].json unless --json). See README.md.
 */
import { runCli } from "../../sim/cli/cli-args.ts";
import { EDGE_USAGE, parseEdgeCli } from "./edge/edge-args.ts";
import { runEdgeCli } from "./edge/edge-cli.ts";

runCli("bench:edge", EDGE_USAGE, () => runEdgeCli(parseEdgeCli(process.argv.slice(2))));
