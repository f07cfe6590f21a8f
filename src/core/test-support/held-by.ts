/**
 * Test-only: which origins a router's index believes hold how much of a prompt, read from its
 * snapshot (no router state touched), so two routers' indexes can be compared by origin id.
 */
import { RadixIndex } from "../radix-index/radix-index.ts";
import type { CoreRouter } from "../router/core-router.ts";
import { decodeSnapshot } from "../router/router-snapshot.ts";

/** A reader of `router`'s index as it is now: prompt -> { origin id: chunks held }. */
export function indexReader(
  router: CoreRouter,
): (hashes: readonly number[]) => Record<string, number> {
  const { header, index } = decodeSnapshot(router.snapshot());
  const restored = RadixIndex.restore(index);
  const out = new Int32Array(256);
  return (hashes) => {
    restored.match(hashes, out);
    const held: Record<string, number> = {};
    for (const { slot, id } of header.slots)
      if ((out[slot] as number) > 0) held[id] = out[slot] as number;
    return held;
  };
}
