/**
 * Engine calibration profiles: what one origin (one vLLM server) can do, derived from the model
 * card and the GPU datasheet by roofline arithmetic, with every assumption named. Derived numbers
 * are computed here, not typed in, so the arithmetic is the documentation.
 *
 * Sources:
 * - H100 SXM5 80 GB: 989.4 TFLOPS dense BF16, 3.35 TB/s HBM3 (NVIDIA H100 datasheet; the
 *   1,979 TFLOPS headline is with sparsity). 81,559 MiB visible to CUDA (nvidia-smi).
 * - H200 SXM 141 GB: 989.4 TFLOPS dense BF16 (NVIDIA H200 datasheet: 1,979 TFLOPS with
 *   sparsity, the same Hopper die as H100 SXM), 4.8 TB/s HBM3e; 143,771 MiB visible to CUDA
 *   (nvidia-smi). NVIDIA DGX H200: eight 400 Gb/s ConnectX-7, one per GPU, as DGX H100.
 * - A100 SXM4 80 GB: 312 TFLOPS dense BF16 (NVIDIA A100 datasheet: 624 with sparsity), 2,039
 *   GB/s HBM2e; 81,920 MiB visible to CUDA (nvidia-smi). NVIDIA DGX A100: eight 200 Gb/s
 *   ConnectX-6 HDR for the compute fabric, one per GPU.
 * - L40S 48 GB (PCIe): 362.05 TFLOPS dense BF16 (NVIDIA L40S datasheet: 733 with sparsity), 864
 *   GB/s GDDR6; 46,068 MiB visible to CUDA (nvidia-smi). No NVLink and no per-GPU NIC in the
 *   datasheet: one 200 Gb/s NIC per GPU is assumed (NVIDIA's L40S OVX reference servers pair
 *   each two GPUs with a 400 Gb/s ConnectX-7 or BlueField-3).
 * - Llama-3.1-8B config.json: 32 layers, 32 query heads x 128 dim (4,096), 8 KV heads, 8.03 B
 *   parameters. KV per token = 32 layers x 8 heads x 128 dim x 2 (K,V) x 2 bytes = 128 KiB.
 * - Llama-3.1-70B config.json: 80 layers, 64 query heads x 128 dim (8,192), 8 KV heads, 70.6 B
 *   parameters. KV per token = 80 x 8 x 128 x 2 x 2 = 320 KiB, split over TP4 = 80 KiB per GPU.
 * - vLLM defaults on H100-class GPUs for the OpenAI server: max_num_batched_tokens 8192,
 *   max_num_seqs 1024 (vllm/engine/arg_utils.py `get_batch_defaults`: devices with >= 70 GiB
 *   that are not A100, so H100 and H200); on A100 and smaller GPUs (L40S) 2048 and 256;
 *   gpu_memory_utilization 0.9 (vllm/config/cache.py).
 * - KV transfer between a prefill and a decode engine (disaggregated serving): NIXL over RDMA,
 *   one 400 Gb/s ConnectX-7 per GPU (NVIDIA DGX H100: eight, one per GPU, for the compute
 *   fabric), 50 GB/s; a TP-n engine moves its KV shards over its n NICs at once.
 * Assumptions (stated, not measured here):
 * - prefill GEMMs and FlashAttention reach 40% of peak (MFU 0.4), decode reads reach 70% of HBM
 *   bandwidth (MBU 0.7), on every GPU kind alike; TP4 all-reduces cost 15% (efficiency 0.85);
 * - 3 GiB per GPU for activations at 8,192 batched tokens, CUDA graphs and the NCCL/torch
 *   context, which vLLM's memory profiling subtracts before sizing the KV cache;
 * - 1.5 ms of scheduling and launch overhead per iteration.
 * - KV transfers reach 80% of the NICs' line rate and cost 1 ms each beyond it (NIXL's metadata
 *   and completion notification, the decode scheduler picking the request up); each transfer
 *   has its link to itself (no contention between concurrent transfers).
 */

const GIB = 2 ** 30;

export interface GpuSpec {
  /** For the report, e.g. "H100 SXM". */
  name: string;
  /** Dense BF16 FLOP/s. */
  peakFlops: number;
  /** Bytes/s of the GPU's own network link to other engines (its RDMA NIC). */
  nicBytesPerSecond: number;
  /** HBM bytes/s. */
  hbmBytesPerSecond: number;
  /** Device memory visible to CUDA, bytes. */
  memoryBytes: number;
}

export interface ModelSpec {
  name: string;
  parameters: number;
  layers: number;
  /** Query heads x head dim (the width attention scores are computed over). */
  attentionWidth: number;
  kvHeads: number;
  headDim: number;
  bytesPerParameter: number;
}

export interface DeploymentSpec {
  gpu: GpuSpec;
  model: ModelSpec;
  tensorParallel: number;
  tensorParallelEfficiency: number;
  mfu: number;
  mbu: number;
  gpuMemoryUtilization: number;
  reservedBytesPerGpu: number;
  overheadMs: number;
  maxBatchedTokens: number;
  maxSeqs: number;
  /** Share of the NICs' line rate a KV transfer reaches, and its fixed cost in ms. */
  nicEfficiency: number;
  kvTransferLatencyMs: number;
}

export interface EngineProfile {
  name: string;
  model: string;
  /** Where the numbers come from, for the report. */
  source: string;
  /** Linear-layer prefill speed (short context): also the router's `prefillTokensPerSecond`. */
  prefillTokensPerSecond: number;
  /** Context length at which a token's attention FLOPs equal its linear FLOPs. */
  attentionTokens: number;
  /** Time to stream the weights once (the floor of a decode step), ms. */
  weightsReadMs: number;
  /** Extra decode-step time per token of context read from the KV cache, ms. */
  kvReadMsPerToken: number;
  overheadMs: number;
  /** KV cache size in tokens, as vLLM would size it. */
  kvCapacityTokens: number;
  kvBytesPerToken: number;
  maxBatchedTokens: number;
  maxSeqs: number;
  /** Bytes/s one KV transfer moves from a prefill engine to a decode engine (all its GPUs). */
  kvLinkBytesPerSecond: number;
  /** Fixed cost of one KV transfer, ms. */
  kvTransferLatencyMs: number;
}

export const H100_SXM: GpuSpec = {
  name: "H100 SXM",
  peakFlops: 989.4e12,
  nicBytesPerSecond: 400e9 / 8,
  hbmBytesPerSecond: 3.35e12,
  memoryBytes: 81_559 * 2 ** 20,
};

export const H200_SXM: GpuSpec = {
  name: "H200 SXM",
  peakFlops: 989.4e12,
  nicBytesPerSecond: 400e9 / 8,
  hbmBytesPerSecond: 4.8e12,
  memoryBytes: 143_771 * 2 ** 20,
};

export const A100_SXM_80GB: GpuSpec = {
  name: "A100 SXM4 80GB",
  peakFlops: 312e12,
  nicBytesPerSecond: 200e9 / 8,
  hbmBytesPerSecond: 2.039e12,
  memoryBytes: 81_920 * 2 ** 20,
};

export const L40S: GpuSpec = {
  name: "L40S",
  peakFlops: 362.05e12,
  nicBytesPerSecond: 200e9 / 8,
  hbmBytesPerSecond: 0.864e12,
  memoryBytes: 46_068 * 2 ** 20,
};

export const LLAMA_3_1_8B: ModelSpec = {
  name: "llama-3.1-8b",
  parameters: 8.03e9,
  layers: 32,
  attentionWidth: 4096,
  kvHeads: 8,
  headDim: 128,
  bytesPerParameter: 2,
};

export const LLAMA_3_1_70B: ModelSpec = {
  name: "llama-3.1-70b",
  parameters: 70.6e9,
  layers: 80,
  attentionWidth: 8192,
  kvHeads: 8,
  headDim: 128,
  bytesPerParameter: 2,
};

const VLLM_H100 = {
  mfu: 0.4,
  mbu: 0.7,
  gpuMemoryUtilization: 0.9,
  reservedBytesPerGpu: 3 * GIB,
  overheadMs: 1.5,
  maxBatchedTokens: 8192,
  maxSeqs: 1024,
  nicEfficiency: 0.8,
  kvTransferLatencyMs: 1,
};

/** vLLM's smaller batch defaults on A100 and on GPUs under 70 GiB (`get_batch_defaults`). */
const VLLM_SMALL = { ...VLLM_H100, maxBatchedTokens: 2048, maxSeqs: 256 };

/** The roofline arithmetic from a deployment to an engine profile. */
export function deriveProfile(name: string, d: DeploymentSpec): EngineProfile {
  const { gpu, model } = d;
  const tp = d.tensorParallel;
  // Forward pass: 2 FLOPs per parameter per token; attention: QK^T and AV, 2 FLOPs each per
  // (query, key) pair per unit of width per layer.
  const flopsPerToken = 2 * model.parameters;
  const attentionFlopsPerPair = 4 * model.layers * model.attentionWidth;
  const effectiveFlops = gpu.peakFlops * d.mfu * tp * d.tensorParallelEfficiency;
  const kvBytesPerToken = model.layers * model.kvHeads * model.headDim * 2 * 2;
  const bandwidth = gpu.hbmBytesPerSecond * d.mbu * d.tensorParallelEfficiency;
  const weightsPerGpu = (model.parameters * model.bytesPerParameter) / tp;
  const kvBytesPerGpu =
    gpu.memoryBytes * d.gpuMemoryUtilization - weightsPerGpu - d.reservedBytesPerGpu;
  return {
    name,
    model: model.name,
    source:
      `${model.name} on ${tp}x ${gpu.name}; roofline at MFU ${d.mfu}, MBU ${d.mbu}` +
      (tp > 1 ? `, TP efficiency ${d.tensorParallelEfficiency}` : ""),
    prefillTokensPerSecond: Math.round(effectiveFlops / flopsPerToken),
    attentionTokens: Math.round(flopsPerToken / attentionFlopsPerPair),
    weightsReadMs: (weightsPerGpu / bandwidth) * 1000,
    kvReadMsPerToken: (kvBytesPerToken / tp / bandwidth) * 1000,
    overheadMs: d.overheadMs,
    kvCapacityTokens: Math.floor(kvBytesPerGpu / (kvBytesPerToken / tp)),
    kvBytesPerToken,
    maxBatchedTokens: d.maxBatchedTokens,
    maxSeqs: d.maxSeqs,
    kvLinkBytesPerSecond: gpu.nicBytesPerSecond * d.nicEfficiency * tp,
    kvTransferLatencyMs: d.kvTransferLatencyMs,
  };
}

export const PROFILES: Readonly<Record<string, EngineProfile>> = {
  "llama-3.1-8b-h100": deriveProfile("llama-3.1-8b-h100", {
    ...VLLM_H100,
    gpu: H100_SXM,
    model: LLAMA_3_1_8B,
    tensorParallel: 1,
    tensorParallelEfficiency: 1,
  }),
  "llama-3.1-8b-h200": deriveProfile("llama-3.1-8b-h200", {
    ...VLLM_H100,
    gpu: H200_SXM,
    model: LLAMA_3_1_8B,
    tensorParallel: 1,
    tensorParallelEfficiency: 1,
  }),
  "llama-3.1-8b-a100": deriveProfile("llama-3.1-8b-a100", {
    ...VLLM_SMALL,
    gpu: A100_SXM_80GB,
    model: LLAMA_3_1_8B,
    tensorParallel: 1,
    tensorParallelEfficiency: 1,
  }),
  "llama-3.1-8b-l40s": deriveProfile("llama-3.1-8b-l40s", {
    ...VLLM_SMALL,
    gpu: L40S,
    model: LLAMA_3_1_8B,
    tensorParallel: 1,
    tensorParallelEfficiency: 1,
  }),
  "llama-3.1-70b-4xh100": deriveProfile("llama-3.1-70b-4xh100", {
    ...VLLM_H100,
    gpu: H100_SXM,
    model: LLAMA_3_1_70B,
    tensorParallel: 4,
    tensorParallelEfficiency: 0.85,
  }),
};

export const DEFAULT_PROFILE = "llama-3.1-8b-h100";

export function profileNamed(name: string): EngineProfile {
  const profile = PROFILES[name];
  if (!profile) {
    throw new Error(`unknown profile "${name}"; known: ${Object.keys(PROFILES).join(", ")}`);
  }
  return profile;
}
