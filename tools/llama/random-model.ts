/**
 * A random-weight llama-architecture model as GGUF, for running llama.cpp's server in tests and
 * benchmarks. Its vocabulary is printable ASCII plus newline, each byte spelled through GPT-2's
 * byte-to-symbol table and no merges (so one token per byte), then the chatml special tokens;
 * a chatml chat template. ASCII only: with all 256 bytes a random model emits invalid UTF-8 and
 * the chat endpoints answer 500. Weights are seeded uniform noise scaled by 1/sqrt(fan-in), norms
 * are ones: its answers are noise, but prefill cost and the prompt cache are the engine's own.
 */
import { createRng } from "../../src/core/rng.ts";
import type { GgufFile, GgufTensor } from "./gguf-writer.ts";

export interface ModelShape {
  /** Embedding width (`llama.embedding_length`). */
  dim: number;
  layers: number;
  /** Feed-forward hidden width. */
  ffn: number;
  heads: number;
  /** Key/value heads (grouped-query attention when fewer than `heads`). */
  kvHeads: number;
  /** The context length the model declares (llama-server's `-c` defaults to it). */
  contextLength: number;
}

/** The chatml special tokens, after the byte tokens. */
export const SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] as const;

export const CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** The bytes with a token: newline and printable ASCII. */
export const VOCAB_BYTES: readonly number[] = [
  0x0a,
  ...Array.from({ length: 0x7f - 0x20 }, (_, i) => 0x20 + i),
];

/**
 * GPT-2's byte-to-symbol table: printable Latin-1 bytes stand for themselves, every other byte
 * takes the next code point from 256 upwards, in byte order (space is U+0120, newline U+010A).
 */
export function gpt2ByteSymbol(byte: number): string {
  const visible = (b: number) =>
    (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  if (visible(byte)) return String.fromCodePoint(byte);
  let n = 0;
  for (let b = 0; b < byte; b++) if (!visible(b)) n++;
  return String.fromCodePoint(256 + n);
}

const TOKEN_NORMAL = 1;
const TOKEN_CONTROL = 3;

/** The GGUF of a random llama model of `shape`, its weights drawn from `seed`. */
export function randomLlamaModel(shape: ModelShape, seed: number, name: string): GgufFile {
  const { dim, layers, ffn, heads, kvHeads } = shape;
  if (dim % heads !== 0 || heads % kvHeads !== 0) {
    throw new Error(`model shape: dim ${dim}, heads ${heads}, kv heads ${kvHeads} do not divide`);
  }
  const headDim = dim / heads;
  const kvDim = headDim * kvHeads;
  const tokens = [...VOCAB_BYTES.map(gpt2ByteSymbol), ...SPECIAL_TOKENS];
  const vocab = tokens.length;
  const id = (t: (typeof SPECIAL_TOKENS)[number]) => VOCAB_BYTES.length + SPECIAL_TOKENS.indexOf(t);

  const rng = createRng(seed);
  const noise = (dims: readonly [number, number]) => (): Float32Array => {
    const [fanIn, rows] = dims;
    const data = new Float32Array(fanIn * rows);
    const scale = Math.sqrt(3 / fanIn); // uniform with variance 1/fan-in
    for (let i = 0; i < data.length; i++) data[i] = (rng.next() * 2 - 1) * scale;
    return data;
  };
  const ones = (n: number) => (): Float32Array => new Float32Array(n).fill(1);
  const matrix = (name: string, fanIn: number, rows: number): GgufTensor => ({
    name,
    dims: [fanIn, rows],
    data: noise([fanIn, rows]),
  });
  const norm = (name: string): GgufTensor => ({ name, dims: [dim], data: ones(dim) });

  const tensors: GgufTensor[] = [
    matrix("token_embd.weight", dim, vocab),
    norm("output_norm.weight"),
    matrix("output.weight", dim, vocab),
  ];
  for (let l = 0; l < layers; l++) {
    const b = `blk.${l}`;
    tensors.push(
      norm(`${b}.attn_norm.weight`),
      matrix(`${b}.attn_q.weight`, dim, dim),
      matrix(`${b}.attn_k.weight`, dim, kvDim),
      matrix(`${b}.attn_v.weight`, dim, kvDim),
      matrix(`${b}.attn_output.weight`, dim, dim),
      norm(`${b}.ffn_norm.weight`),
      matrix(`${b}.ffn_gate.weight`, dim, ffn),
      matrix(`${b}.ffn_up.weight`, dim, ffn),
      matrix(`${b}.ffn_down.weight`, ffn, dim),
    );
  }

  const u32 = (value: number) => ({ type: "uint32", value }) as const;
  return {
    metadata: [
      ["general.architecture", { type: "string", value: "llama" }],
      ["general.name", { type: "string", value: name }],
      ["general.file_type", u32(0)], // all F32
      ["llama.context_length", u32(shape.contextLength)],
      ["llama.embedding_length", u32(dim)],
      ["llama.block_count", u32(layers)],
      ["llama.feed_forward_length", u32(ffn)],
      ["llama.attention.head_count", u32(heads)],
      ["llama.attention.head_count_kv", u32(kvHeads)],
      ["llama.rope.dimension_count", u32(headDim)],
      ["llama.rope.freq_base", { type: "float32", value: 10000 }],
      ["llama.attention.layer_norm_rms_epsilon", { type: "float32", value: 1e-5 }],
      ["llama.vocab_size", u32(vocab)],
      ["tokenizer.ggml.model", { type: "string", value: "gpt2" }],
      ["tokenizer.ggml.pre", { type: "string", value: "default" }],
      ["tokenizer.ggml.tokens", { type: "array", itemType: "string", value: tokens }],
      [
        "tokenizer.ggml.token_type",
        {
          type: "array",
          itemType: "int32",
          value: tokens.map((_, i) => (i < VOCAB_BYTES.length ? TOKEN_NORMAL : TOKEN_CONTROL)),
        },
      ],
      ["tokenizer.ggml.merges", { type: "array", itemType: "string", value: [] }],
      ["tokenizer.ggml.bos_token_id", u32(id("<|endoftext|>"))],
      ["tokenizer.ggml.eos_token_id", u32(id("<|im_end|>"))],
      ["tokenizer.ggml.padding_token_id", u32(id("<|endoftext|>"))],
      ["tokenizer.ggml.add_bos_token", { type: "bool", value: false }],
      ["tokenizer.chat_template", { type: "string", value: CHAT_TEMPLATE }],
    ],
    tensors,
  };
}
