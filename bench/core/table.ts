/** Prints benchmark rows as an aligned table (benchmarks print tables, never assert). */
export interface Row {
  name: string;
  value: number;
  unit: string;
  target?: string;
}

export function printTable(title: string, rows: readonly Row[]): void {
  const cells = rows.map((r) => [r.name, formatValue(r.value), r.unit, r.target ?? ""]);
  const header = ["measure", "value", "unit", "target"];
  const widths = header.map((h, i) =>
    Math.max(h.length, ...cells.map((c) => (c[i] as string).length)),
  );
  const line = (c: string[]) =>
    c
      .map((x, i) => (i === 1 ? x.padStart(widths[i] as number) : x.padEnd(widths[i] as number)))
      .join("  ");
  console.log(`\n${title}`);
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const c of cells) console.log(line(c));
}

function formatValue(v: number): string {
  if (Number.isInteger(v)) return v.toLocaleString("en-US");
  return v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(2) : v.toPrecision(3);
}
