/**
 * The GGUF v3 container, written: the header (magic, version, tensor and key counts), typed
 * metadata key/values, tensor infos, then each tensor's data at an offset aligned to
 * `general.alignment` (which this writer always records). Little-endian, F32 tensors only: the
 * project's random models need nothing else. The layout follows ggml's `docs/gguf.md`.
 */
import { closeSync, openSync, renameSync, rmSync, writeSync } from "node:fs";

/** GGUF's value type codes (`gguf_metadata_value_type`). */
export const GGUF_TYPE = {
  uint8: 0,
  int8: 1,
  uint16: 2,
  int16: 3,
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  array: 9,
  uint64: 10,
  int64: 11,
  float64: 12,
} as const;

/** The scalar types this writer emits, alone or as array items. */
export type GgufScalarType = "uint32" | "int32" | "float32" | "bool" | "string" | "uint64";

export type GgufValue =
  | { type: "uint32" | "int32" | "float32"; value: number }
  | { type: "uint64"; value: bigint }
  | { type: "bool"; value: boolean }
  | { type: "string"; value: string }
  | { type: "array"; itemType: "int32" | "uint32" | "float32"; value: readonly number[] }
  | { type: "array"; itemType: "string"; value: readonly string[] };

export interface GgufTensor {
  name: string;
  /** ggml order: `dims[0]` varies fastest (a matrix's row length first). */
  dims: readonly number[];
  /** The F32 values, produced when written (so a large model is never all in memory twice). */
  data: () => Float32Array;
}

export interface GgufFile {
  metadata: readonly (readonly [string, GgufValue])[];
  tensors: readonly GgufTensor[];
  /** Multiple of 8; GGUF's default is 32. */
  alignment?: number;
}

const GGML_TYPE_F32 = 0;
const MAGIC = 0x46554747; // "GGUF" read as a little-endian u32 (x86 and ARM hosts are little-endian, as F32 data is written)

/** Appends little-endian values to a growing buffer (the header and the tensor infos). */
class ByteSink {
  #buf = Buffer.alloc(1 << 16);
  length = 0;

  #room(n: number): void {
    if (this.length + n <= this.#buf.length) return;
    const grown = Buffer.alloc(Math.max(this.#buf.length * 2, this.length + n));
    this.#buf.copy(grown, 0, 0, this.length);
    this.#buf = grown;
  }
  u32(v: number): void {
    this.#room(4);
    this.length = this.#buf.writeUInt32LE(v, this.length);
  }
  i32(v: number): void {
    this.#room(4);
    this.length = this.#buf.writeInt32LE(v, this.length);
  }
  f32(v: number): void {
    this.#room(4);
    this.length = this.#buf.writeFloatLE(v, this.length);
  }
  u64(v: bigint | number): void {
    this.#room(8);
    this.length = this.#buf.writeBigUInt64LE(BigInt(v), this.length);
  }
  u8(v: number): void {
    this.#room(1);
    this.length = this.#buf.writeUInt8(v, this.length);
  }
  string(s: string): void {
    const bytes = Buffer.from(s, "utf8");
    this.u64(bytes.length);
    this.#room(bytes.length);
    this.length += bytes.copy(this.#buf, this.length);
  }
  zeros(n: number): void {
    this.#room(n);
    this.#buf.fill(0, this.length, this.length + n);
    this.length += n;
  }
  bytes(): Buffer {
    return this.#buf.subarray(0, this.length);
  }
}

function writeScalar(
  sink: ByteSink,
  type: GgufScalarType,
  value: number | bigint | boolean | string,
): void {
  if (type === "uint32") sink.u32(value as number);
  else if (type === "int32") sink.i32(value as number);
  else if (type === "float32") sink.f32(value as number);
  else if (type === "uint64") sink.u64(value as bigint);
  else if (type === "bool") sink.u8(value ? 1 : 0);
  else sink.string(value as string);
}

function writeValue(sink: ByteSink, v: GgufValue): void {
  sink.u32(GGUF_TYPE[v.type]);
  if (v.type !== "array") {
    writeScalar(sink, v.type, v.value);
    return;
  }
  sink.u32(GGUF_TYPE[v.itemType]);
  sink.u64(v.value.length);
  for (const item of v.value) writeScalar(sink, v.itemType, item);
}

const padTo = (n: number, alignment: number) => (alignment - (n % alignment)) % alignment;

/** Writes `file` to `path` (through a temporary name, so a reader never sees half a file). */
export function writeGguf(path: string, file: GgufFile): void {
  const alignment = file.alignment ?? 32;
  if (alignment <= 0 || alignment % 8 !== 0) {
    throw new Error(`GGUF alignment must be a positive multiple of 8, got ${alignment}`);
  }
  const metadata = [
    ...file.metadata.filter(([key]) => key !== "general.alignment"),
    ["general.alignment", { type: "uint32", value: alignment }] as const,
  ];
  const head = new ByteSink();
  head.u32(MAGIC);
  head.u32(3);
  head.u64(file.tensors.length);
  head.u64(metadata.length);
  for (const [key, value] of metadata) {
    head.string(key);
    writeValue(head, value);
  }
  let offset = 0;
  for (const t of file.tensors) {
    head.string(t.name);
    head.u32(t.dims.length);
    for (const d of t.dims) head.u64(d);
    head.u32(GGML_TYPE_F32);
    head.u64(offset);
    const size = t.dims.reduce((a, b) => a * b, 1) * 4;
    offset += size + padTo(size, alignment);
  }
  head.zeros(padTo(head.length, alignment));

  const partial = `${path}.partial-${process.pid}`;
  const fd = openSync(partial, "w");
  let written = false;
  try {
    writeSync(fd, head.bytes());
    for (const t of file.tensors) {
      const data = t.data();
      const expected = t.dims.reduce((a, b) => a * b, 1);
      if (data.length !== expected) {
        throw new Error(`tensor ${t.name}: ${data.length} values for dims ${t.dims.join("x")}`);
      }
      writeSync(fd, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      writeSync(fd, Buffer.alloc(padTo(data.byteLength, alignment)));
    }
    written = true;
  } finally {
    closeSync(fd);
    if (!written) rmSync(partial, { force: true });
  }
  renameSync(partial, path);
}
