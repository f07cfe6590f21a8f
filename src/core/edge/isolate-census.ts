/**
 * How many distinct isolates a coordinator has heard from, since its start and in the last
 * hour: the unknown edge mode's bill depends on (every warm isolate syncs on its own clock,
 * docs/architecture.md, "Cost model"), so an operator can read it from `/admin/state`.
 *
 * HyperLogLog (Flajolet, Fusy, Gandouet, Meunier, "HyperLogLog: the analysis of a near-optimal
 * cardinality estimation algorithm", AofA 2007) with linear counting below 2.5 m (the small-range
 * correction of the paper, which is what makes a handful of isolates read exactly): m = 1024
 * one-byte registers, standard error 1.04 / sqrt(m) = 3.25%. An id's 53-bit `seedHash` picks the
 * register (low 10 bits) and the rank (leading zeros of the next 43, + 1); ids are 128 random
 * bits (isolate-id.ts), so the hash only spreads them, and any string is accepted.
 *
 * The hour is `WINDOWS` sketches of `WINDOW_MS` each, the oldest dropped as time moves on; their
 * union (the registers' maximum) counts the isolates seen in the last 50-60 minutes. Memory:
 * (WINDOWS + 1) x 1 KiB, whatever the number of isolates. `now` is the caller's (the core reads
 * no clock).
 */
import { seedHash } from "../chunk-hash.ts";

/** log2 of the register count. */
const P = 10;
const M = 1 << P;
/** Bits of seedHash's 53 after the register index. */
const RANK_BITS = 53 - P;
const TWO_POW_32 = 4294967296;
/** Bias constant for m >= 128 (the paper's alpha_m). */
const ALPHA = 0.7213 / (1 + 1.079 / M);
/** One window's length and how many make the hour. */
export const WINDOW_MS = 10 * 60_000;
export const WINDOWS = 6;
/** The relative standard error of an estimate. */
export const CENSUS_STANDARD_ERROR = 1.04 / Math.sqrt(M);

/** The registers an id sets: its register and its rank there. */
function place(id: string): { register: number; rank: number } {
  const h = seedHash(id);
  const low = h % TWO_POW_32;
  const register = low & (M - 1);
  // The 43 bits above the register index, as a number below 2^43 (exact in a double).
  const rest = Math.floor(h / M);
  let rank = 1;
  for (let bit = RANK_BITS - 1; bit >= 0 && Math.floor(rest / 2 ** bit) % 2 === 0; bit--) rank++;
  return { register, rank };
}

/** The estimate of a set of registers (each the maximum rank seen there). */
function estimate(registers: Uint8Array): number {
  let sum = 0;
  let zeros = 0;
  for (const r of registers) {
    sum += 2 ** -r;
    if (r === 0) zeros++;
  }
  const raw = (ALPHA * M * M) / sum;
  if (raw <= 2.5 * M && zeros > 0) return Math.round(M * Math.log(M / zeros));
  return Math.round(raw);
}

export interface IsolateCount {
  /** Distinct isolates since this coordinator started. */
  sinceStart: number;
  /** Distinct isolates in the last 50-60 minutes (the current window and the five before). */
  lastHour: number;
  /** Relative standard error of both (0.0325); counts below ~100 are near exact. */
  standardError: number;
}

export class IsolateCensus {
  readonly #all = new Uint8Array(M);
  /** Window start (ms, a multiple of WINDOW_MS) and its registers, oldest first. */
  readonly #windows: { start: number; registers: Uint8Array }[] = [];

  /** An isolate was heard from at `now`. */
  see(id: string, now: number): void {
    const { register, rank } = place(id);
    if (rank > (this.#all[register] as number)) this.#all[register] = rank;
    const window = this.#window(now);
    if (rank > (window[register] as number)) window[register] = rank;
  }

  count(now: number): IsolateCount {
    const union = new Uint8Array(M);
    const from = this.#startOf(now) - (WINDOWS - 1) * WINDOW_MS;
    for (const w of this.#windows) {
      if (w.start < from) continue;
      for (let j = 0; j < M; j++) union[j] = Math.max(union[j] as number, w.registers[j] as number);
    }
    return {
      sinceStart: estimate(this.#all),
      lastHour: estimate(union),
      standardError: CENSUS_STANDARD_ERROR,
    };
  }

  #startOf(now: number): number {
    return Math.floor(now / WINDOW_MS) * WINDOW_MS;
  }

  #window(now: number): Uint8Array {
    const start = this.#startOf(now);
    const last = this.#windows[this.#windows.length - 1];
    if (last && last.start >= start) return last.registers;
    const registers = new Uint8Array(M);
    this.#windows.push({ start, registers });
    while (this.#windows.length > WINDOWS) this.#windows.shift();
    return registers;
  }
}
