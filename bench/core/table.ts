/** Prints benchmark rows as an aligned table (benchmarks print tables, never assert). */
import { formatTable } from "../../sim/report/table.ts";

export interface Row {
  name: string;
  value: number;
  unit: string;
  target?: string;
}

export function printTable(title: string, rows: readonly Row[]): void {
  const cells = rows.map((r) => [r.name, formatValue(r.value), r.unit, r.target ?? ""]);
  const header = ["measure", "value", "unit", "target"];
  console.log(`\n${title}`);
  console.log(formatTable(cells, { header, align: ["left", "right", "left", "left"] }));
}

function formatValue(v: number): string {
  if (Number.isInteger(v)) return v.toLocaleString("en-US");
  return v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(2) : v.toPrecision(3);
}
