/**
 * The fast origin as its own process, so the load generator's event loop does not share a core
 * with the origin it measures. Prints `{"url": ...}` once listening; exits on SIGTERM/SIGINT and
 * when its stdin closes, so it cannot outlive the load test even if the parent is killed.
 */
import { startFastOrigin } from "./fast-origin.ts";

const origin = await startFastOrigin(Number(process.env.FAST_ORIGIN_PORT ?? 0));
process.stdout.write(`${JSON.stringify({ url: origin.url })}\n`);
const stop = () => void origin.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.on("close", stop);
process.stdin.resume();
