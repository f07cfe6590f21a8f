/**
 * Writing results: JSON indented for reading but with arrays of numbers on one line (the CDF
 * and timelines would otherwise take thousands of lines), and any file's folder created first.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export function toJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2).replace(
    /\[\s+(-?[\d.e+-]+(?:,\s+-?[\d.e+-]+)*)\s+\]/g,
    (_, items: string) => `[${items.split(/,\s+/).join(", ")}]`,
  )}\n`;
}

export function writeFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
