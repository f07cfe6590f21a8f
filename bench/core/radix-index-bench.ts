/**
 * Radix index micro-benchmark: `match` and `insert` latency and memory per chunk-ownership on
 * an index holding ~1M chunk-ownerships over 32 origins (the targets: match of a
 * 128-chunk prompt <= 20 us median, <= 64 bytes per ownership).
 *
 * Workload (seeded, replayable): 16 system prompts of 16-64 chunks; sessions of 20-200 own
 * chunks after one of them, growing 8-40 chunks per turn, each turn inserted for the session's
 * home origin, 10% of sessions replicated to 1-2 more origins. Every origin's capacity is
 * ownerships/origins, so once full, inserts evict as in production. The whole workload is
 * generated before the index is built, so the heap delta measures the index alone.
 *
 * Run directly: `npx node bench/core/radix-index-bench.ts` (also part of `npm run bench:core`).
 */
import { fileURLToPath } from "node:url";
import { quantile } from "../../sim/report/stats.ts";
import { RadixIndex } from "../../src/core/radix-index/radix-index.ts";
import { createRng, type Rng } from "../../src/core/rng.ts";
import { tryGc } from "./heap.ts";
import { printTable, type Row } from "./table.ts";

export interface RadixBenchOptions {
  /** Chunk-ownerships to hold; default 1,000,000. */
  ownerships?: number;
  /** Origins; default 32. */
  origins?: number;
  seed?: number;
}

interface Session {
  hashes: Float64Array;
  /** Chunks of its system prompt. */
  system: number;
  origins: number[];
}

const PROMPT_CHUNKS = 128;
const MATCH_CALLS = 20_000;
const INSERT_CALLS = 20_000;

function hash53(rng: Rng): number {
  return rng.int(2 ** 21) * 2 ** 32 + rng.int(2 ** 32);
}

function randomHashes(rng: Rng, n: number): Float64Array {
  const a = new Float64Array(n);
  for (let i = 0; i < n; i++) a[i] = hash53(rng);
  return a;
}

/** Sessions and their turns: `turns` holds (session, length) pairs in arrival order. */
function workload(rng: Rng, origins: number, planned: number) {
  const systems = Array.from({ length: 16 }, () => randomHashes(rng, 16 + rng.int(49)));
  const sessions: Session[] = [];
  for (let total = 0; total < planned; ) {
    const system = systems[rng.int(systems.length)]!;
    const own = 20 + rng.int(181);
    const hashes = new Float64Array(system.length + own);
    hashes.set(system);
    hashes.set(randomHashes(rng, own), system.length);
    const home = rng.int(origins);
    const list = [home];
    if (rng.next() < 0.1) {
      for (let extra = 1 + rng.int(2); extra > 0; extra--) {
        const o = (home + 1 + rng.int(origins - 1)) % origins;
        if (!list.includes(o)) list.push(o);
      }
    }
    sessions.push({ hashes, system: system.length, origins: list });
    total += own * list.length;
  }
  const turns: number[] = [];
  const lengths = new Int32Array(sessions.length);
  const active: number[] = [];
  let next = 0;
  while (active.length < 2000 && next < sessions.length) active.push(next++);
  while (active.length > 0) {
    const slot = rng.int(active.length);
    const s = active[slot]!;
    const full = sessions[s]!.hashes.length;
    const start = lengths[s] === 0 ? sessions[s]!.system : lengths[s]!;
    lengths[s] = Math.min(full, start + 8 + rng.int(33));
    turns.push(s, lengths[s]!);
    if (lengths[s] === full) {
      if (next < sessions.length) active[slot] = next++;
      else active.splice(slot, 1);
    }
  }
  return { systems, sessions, turns };
}

function memory(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

export function benchRadixIndex(opts: RadixBenchOptions = {}): { rows: Row[] } {
  const target = opts.ownerships ?? 1_000_000;
  const origins = opts.origins ?? 32;
  const rng = createRng(opts.seed ?? 1);
  const { systems, sessions, turns } = workload(rng, origins, target * 2.5);
  const gc = tryGc();

  gc?.();
  const before = memory();
  const buildStart = process.hrtime.bigint();
  const index = new RadixIndex({ maxOrigins: origins, maxChunks: target });
  const capacity = Math.ceil(target / origins);
  for (let o = 0; o < origins; o++) index.setCapacity(o, capacity);
  let now = 0;
  let t = 0;
  let owned = 0;
  let seen = 0;
  for (; t < turns.length && owned < target * 0.99; t += 2) {
    const s = sessions[turns[t]!]!;
    seen = Math.max(seen, turns[t]! + 1);
    const prefix = s.hashes.subarray(0, turns[t + 1]!);
    for (const o of s.origins) index.insert(prefix, o, now++);
    if (t % 512 === 0) {
      owned = 0;
      for (let o = 0; o < origins; o++) owned += index.owned(o);
    }
  }
  const buildMs = Number(process.hrtime.bigint() - buildStart) / 1e6;
  gc?.();
  const heapDelta = memory() - before;
  const stats = index.stats();

  // Prompts: 70% continue a seen session (hits, often the full 128), 20% a system prompt then
  // new chunks (a shallow hit), 10% all new (a miss).
  const prompts: Float64Array[] = [];
  for (let i = 0; i < 4096; i++) {
    const p = randomHashes(rng, PROMPT_CHUNKS);
    const r = rng.next();
    const head =
      r < 0.7 ? sessions[rng.int(seen)]!.hashes : r < 0.9 ? systems[rng.int(systems.length)]! : p;
    p.set(head.subarray(0, Math.min(PROMPT_CHUNKS, head.length)));
    prompts.push(p);
  }
  const out = new Int32Array(origins);
  let matched = 0;
  for (let i = 0; i < 5000; i++) index.match(prompts[i % prompts.length]!, out);
  const matchNs: number[] = new Array(MATCH_CALLS);
  for (let i = 0; i < MATCH_CALLS; i++) {
    const p = prompts[i % prompts.length]!;
    const t0 = process.hrtime.bigint();
    matched += index.match(p, out);
    matchNs[i] = Number(process.hrtime.bigint() - t0);
  }

  const insertNs: number[] = [];
  for (; t < turns.length && insertNs.length < INSERT_CALLS; t += 2) {
    const s = sessions[turns[t]!]!;
    const prefix = s.hashes.subarray(0, turns[t + 1]!);
    for (const o of s.origins) {
      const t0 = process.hrtime.bigint();
      index.insert(prefix, o, now++);
      insertNs.push(Number(process.hrtime.bigint() - t0));
    }
  }
  index.checkInvariants();

  const snapStart = process.hrtime.bigint();
  const bytes = index.snapshot();
  const snapMs = Number(process.hrtime.bigint() - snapStart) / 1e6;
  const restoreStart = process.hrtime.bigint();
  RadixIndex.restore(bytes);
  const restoreMs = Number(process.hrtime.bigint() - restoreStart) / 1e6;

  const matchSorted = Float64Array.from(matchNs).sort();
  const insertSorted = Float64Array.from(insertNs).sort();
  const rows: Row[] = [
    { name: "chunk-ownerships held", value: stats.ownerships, unit: "", target: "~1M" },
    { name: "distinct chunks", value: stats.chunks, unit: "" },
    { name: "nodes", value: stats.nodes, unit: "" },
    { name: "ownership entries", value: stats.entries, unit: "" },
    { name: "build (inserts until full)", value: buildMs, unit: "ms" },
    {
      name: "typed-array bytes / ownership",
      value: stats.bytes / stats.ownerships,
      unit: "B",
      target: "<= 64",
    },
  ];
  if (gc) {
    rows.push({
      name: "heap delta / ownership (after gc)",
      value: heapDelta / stats.ownerships,
      unit: "B",
      target: "<= 64",
    });
  }
  rows.push(
    {
      name: "match 128 chunks, median",
      value: quantile(matchSorted, 0.5) / 1000,
      unit: "us",
      target: "<= 20",
    },
    { name: "match 128 chunks, p99", value: quantile(matchSorted, 0.99) / 1000, unit: "us" },
    { name: "match mean matched depth", value: matched / MATCH_CALLS, unit: "chunks" },
    { name: "insert, median", value: quantile(insertSorted, 0.5) / 1000, unit: "us" },
    { name: "insert, p99", value: quantile(insertSorted, 0.99) / 1000, unit: "us" },
    { name: "snapshot size", value: bytes.length / 2 ** 20, unit: "MiB" },
    { name: "snapshot()", value: snapMs, unit: "ms" },
    { name: "restore() incl. full invariant check", value: restoreMs, unit: "ms" },
  );
  return { rows };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  printTable("Radix index: ~1M chunk-ownerships over 32 origins", benchRadixIndex().rows);
}
