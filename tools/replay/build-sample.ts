/**
 * Rebuilds the bundled demo sample `tools/replay/conversation-sample.jsonl`: the first 1,000
 * requests of whole conversations from the Mooncake conversation trace (Apache-2.0; see
 * bench/traces/README.md for source and attribution), unchanged records in Mooncake's format.
 *   node tools/replay/build-sample.ts
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parseMooncake } from "../../sim/trace/mooncake.ts";
import { conversations } from "./sessions.ts";

const source = "bench/traces/conversation_trace.jsonl";
const trace = parseMooncake(readFileSync(source, "utf8"), source);
const lines = conversations(trace.records, 1000).map((r) =>
  JSON.stringify({
    timestamp: r.timestampMs,
    input_length: r.inputTokens,
    output_length: r.outputTokens,
    hash_ids: r.blockIds,
  }),
);
writeFileSync("tools/replay/conversation-sample.jsonl", `${lines.join("\n")}\n`);
console.log(`wrote ${lines.length} requests to tools/replay/conversation-sample.jsonl`);
