/**
 * Heap measurement for the micro-benchmarks: a forced GC (via `--expose-gc`, or turned on at
 * run time) and the bytes a function allocates, counted exactly even when GCs run during it
 * (what each GC freed is added back, from V8's GC profiler).
 */
import { GCProfiler, getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export function tryGc(): (() => void) | undefined {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) return g;
  try {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as () => void;
  } catch {
    return undefined;
  }
}

/**
 * Bytes of V8 heap `run` allocates (live or not when it returns), after a GC so that no earlier
 * garbage is counted as freed. Backing stores of ArrayBuffers are not V8 heap and not counted.
 */
export function allocatedBytes(run: () => unknown, gc = tryGc()): number {
  gc?.();
  const profiler = new GCProfiler();
  profiler.start();
  const before = getHeapStatistics().used_heap_size;
  run();
  const after = getHeapStatistics().used_heap_size;
  let freed = 0;
  for (const { beforeGC, afterGC } of profiler.stop().statistics) {
    freed += beforeGC.heapStatistics.usedHeapSize - afterGC.heapStatistics.usedHeapSize;
  }
  return after - before + freed;
}
