/**
 * Canonicalise + hash throughput: the edge's per-request CPU work, on chat bodies of 4 KB,
 * 32 KB and 256 KB parsed from JSON (as the Worker sees them: flat strings from JSON.parse).
 */
import { promptKey } from "../../src/core/prompt/prompt-key.ts";
import type { Row } from "./table.ts";

function filler(bytes: number, salt: number): string {
  let s = "";
  for (let i = 0; s.length < bytes; i++)
    s += `token${(i * 2654435761 + salt) % 99991} lorem ipsum, `;
  return s.slice(0, bytes);
}

function body(bytes: number): unknown {
  const messages = [
    { role: "system", content: filler(bytes / 4, 1) },
    { role: "user", content: filler(bytes / 4, 2) },
    { role: "assistant", content: filler(bytes / 4, 3) },
    { role: "user", content: [{ type: "text", text: filler(bytes / 4, 4) }] },
  ];
  return JSON.parse(JSON.stringify({ model: "llama-3.1-8b", messages }));
}

export function benchHashing(): Row[] {
  const rows: Row[] = [];
  for (const kb of [4, 32, 256]) {
    const b = body(kb * 1024) as { model: string };
    const iterations = Math.ceil((400 * 1024 * 1024) / (kb * 1024));
    for (let i = 0; i < iterations / 4; i++) promptKey(b);
    const samples: number[] = [];
    for (let round = 0; round < 5; round++) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < iterations / 5; i++) promptKey(b);
      const ns = Number(process.hrtime.bigint() - t0);
      samples.push((kb * 1024 * (iterations / 5)) / ns);
    }
    samples.sort((x, y) => x - y);
    rows.push({
      name: `canonicalise+hash ${kb} KB (median of 5)`,
      value: samples[2] as number,
      unit: "GB/s",
      target: ">= 1",
    });
  }
  return rows;
}
