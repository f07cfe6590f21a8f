/**
 * The project's llama.cpp models: a random llama of a named size, generated once into the
 * git-ignored `.models/` at the repo root (or `dir`) and reused, cached by size, seed and the
 * generator's version (part of the file name, so a changed generator never serves a stale file).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { writeGguf } from "./gguf-writer.ts";
import { type ModelShape, randomLlamaModel } from "./random-model.ts";

/** `tiny`: tests (generated in well under a second). `bench`: ~25M parameters, ~100 MB. */
export type ModelSize = "tiny" | "bench";

/** Bump when the generator's output changes. */
const GENERATOR_VERSION = 1;

export const MODEL_SHAPES: Readonly<Record<ModelSize, ModelShape>> = {
  tiny: { dim: 64, layers: 2, ffn: 192, heads: 4, kvHeads: 2, contextLength: 8192 },
  // The engines README's measured model: ~560-700 prompt tokens/s at -t 1 on this machine.
  bench: { dim: 512, layers: 8, ffn: 1536, heads: 8, kvHeads: 4, contextLength: 16384 },
};

const defaultDir = resolve(import.meta.dirname, "../../.models");

/** The path of the model of `size` and `seed` (default 1), written if not there yet. */
export async function ensureModel(opts: {
  size: ModelSize;
  seed?: number;
  dir?: string;
}): Promise<string> {
  const seed = opts.seed ?? 1;
  const dir = opts.dir ?? defaultDir;
  const name = `llama-random-${opts.size}-s${seed}-v${GENERATOR_VERSION}`;
  const path = join(dir, `${name}.gguf`);
  if (existsSync(path)) return path;
  mkdirSync(dir, { recursive: true });
  writeGguf(path, randomLlamaModel(MODEL_SHAPES[opts.size], seed, name));
  return path;
}
