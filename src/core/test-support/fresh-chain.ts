/**
 * Test-only: the chunk hashes of a prompt of `chunks` chunks that shares no chunk with the
 * prompt of any other `n`, chained as the edge chains them (chunk-hash.ts).
 */
import { chainHash } from "../chunk-hash.ts";

export function freshChain(n: number, chunks: number): number[] {
  const hashes: number[] = [];
  let h = 1_000_003 * n + 17;
  for (let i = 0; i < chunks; i++) {
    h = chainHash(h, i);
    hashes.push(h);
  }
  return hashes;
}
