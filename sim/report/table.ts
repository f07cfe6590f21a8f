/**
 * The one plain-text table printer for Node code: the benchmark's results and fleet sweep,
 * `npm run bench:core`, `npm start`'s summary. Cells are padded to their column's widest cell
 * (header included), two spaces apart; the first column is left-aligned and the rest
 * right-aligned (names, then figures) unless `align` says otherwise. A header gets a dashed
 * rule under it; an empty row prints as a blank line, to separate sections that share widths.
 */
export type Align = "left" | "right";

export interface TableOptions {
  /** Column titles, printed first with a dashed rule under them. */
  header?: readonly string[];
  /** Per column; columns past its end use the default (first left, others right). */
  align?: readonly Align[];
}

export function formatTable(
  rows: readonly (readonly string[])[],
  { header, align = [] }: TableOptions = {},
): string {
  const all = header ? [header, ...rows] : rows;
  const columns = Math.max(0, ...all.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, i) =>
    Math.max(0, ...all.map((r) => (r[i] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => {
        const w = widths[i] as number;
        return (align[i] ?? (i === 0 ? "left" : "right")) === "left" ? c.padEnd(w) : c.padStart(w);
      })
      .join("  ");
  const rule = header ? [widths.map((w) => "-".repeat(w)).join("  ")] : [];
  return [...(header ? [line(header)] : []), ...rule, ...rows.map(line)].join("\n");
}
