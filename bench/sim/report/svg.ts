/**
 * Inline SVG charts for the self-contained report (no scripts, no CDN): a line chart with
 * linear or log axes and optional marked points, and a bar chart, each with a legend and
 * optional labelled reference lines.
 */

export interface Series {
  label: string;
  color: string;
  points: readonly (readonly [number, number])[];
}

export interface RefLine {
  y: number;
  label: string;
  color: string;
}

/** A point drawn as a ring on a line chart (e.g. each seed's capacity). */
export interface Mark {
  x: number;
  y: number;
  color: string;
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  xLog?: boolean;
  yLog?: boolean;
  yMin?: number;
  yMax?: number;
  /** Explicit x ticks (e.g. the fleet sizes), instead of the computed ones. */
  xTicks?: readonly number[];
  refLines?: readonly RefLine[];
  marks?: readonly Mark[];
  width?: number;
  height?: number;
}

const M = { left: 64, right: 170, top: 28, bottom: 44 };

export function escapeXml(text: string): string {
  return text.replace(
    /[&<>"]/g,
    (c) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot" }[c]};`,
  );
}

function fmt(v: number): string {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (a >= 1e3) return `${+(v / 1e3).toPrecision(3)}k`;
  return `${+v.toPrecision(3)}`;
}

/**
 * Ticks: powers of ten on a log axis (1, 2 and 5 times them when it spans less than two), 1-2-5
 * steps on a linear one.
 */
function ticks(lo: number, hi: number, log: boolean): number[] {
  if (log) {
    const within = (mantissas: readonly number[]) => {
      const out: number[] = [];
      for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
        for (const m of mantissas)
          if (m * 10 ** e >= lo && m * 10 ** e <= hi) out.push(m * 10 ** e);
      }
      return out;
    };
    const decades = within([1]);
    if (decades.length >= 2) return decades;
    const finer = within([1, 2, 5]);
    return finer.length >= 2 ? finer : [lo, hi];
  }
  const raw = (hi - lo) / 5 || 1;
  const p = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push(+v.toPrecision(12));
  return out;
}

function axis(lo: number, hi: number, log: boolean, from: number, to: number) {
  const a = log ? Math.log10(lo) : lo;
  const b = log ? Math.log10(hi) : hi;
  return (v: number) => from + (((log ? Math.log10(v) : v) - a) / (b - a || 1)) * (to - from);
}

function frame(o: ChartOptions, body: string, legend: readonly { label: string; color: string }[]) {
  const w = o.width ?? 720;
  const h = o.height ?? 340;
  const items = legend
    .map(
      (s, i) =>
        `<rect x="${w - M.right + 12}" y="${M.top + i * 16}" width="10" height="10" fill="${s.color}"/>` +
        `<text x="${w - M.right + 27}" y="${M.top + i * 16 + 9}">${escapeXml(s.label)}</text>`,
    )
    .join("");
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" ` +
    `font-family="system-ui, sans-serif" font-size="11">` +
    `<text x="${M.left}" y="16" font-size="13" font-weight="600">${escapeXml(o.title)}</text>` +
    `${body}${items}` +
    `<text x="${(M.left + w - M.right) / 2}" y="${h - 6}" text-anchor="middle">${escapeXml(o.xLabel)}</text>` +
    `<text transform="translate(14 ${(M.top + h - M.bottom) / 2}) rotate(-90)" text-anchor="middle">${escapeXml(o.yLabel)}</text>` +
    `</svg>`
  );
}

function grid(
  o: ChartOptions,
  x: { lo: number; hi: number; log: boolean; at: (v: number) => number } | null,
  y: { lo: number; hi: number; log: boolean; at: (v: number) => number },
): string {
  const w = o.width ?? 720;
  const h = o.height ?? 340;
  let out = "";
  for (const v of ticks(y.lo, y.hi, y.log)) {
    const py = y.at(v).toFixed(1);
    out += `<line x1="${M.left}" x2="${w - M.right}" y1="${py}" y2="${py}" stroke="#e4e4e4"/>`;
    out += `<text x="${M.left - 6}" y="${py}" text-anchor="end" dy="4">${fmt(v)}</text>`;
  }
  if (x) {
    for (const v of o.xTicks ?? ticks(x.lo, x.hi, x.log)) {
      const px = x.at(v).toFixed(1);
      out += `<line x1="${px}" x2="${px}" y1="${M.top}" y2="${h - M.bottom}" stroke="#f0f0f0"/>`;
      out += `<text x="${px}" y="${h - M.bottom + 14}" text-anchor="middle">${fmt(v)}</text>`;
    }
  }
  out += `<rect x="${M.left}" y="${M.top}" width="${w - M.left - M.right}" height="${h - M.top - M.bottom}" fill="none" stroke="#888"/>`;
  for (const r of o.refLines ?? []) {
    const py = y.at(r.y).toFixed(1);
    out += `<line x1="${M.left}" x2="${w - M.right}" y1="${py}" y2="${py}" stroke="${r.color}" stroke-dasharray="5 4"/>`;
    out += `<text x="${w - M.right - 4}" y="${py}" dy="-4" text-anchor="end" fill="${r.color}">${escapeXml(r.label)}</text>`;
  }
  return out;
}

function range(values: number[], log: boolean, min?: number, max?: number): [number, number] {
  const usable = log ? values.filter((v) => v > 0) : values;
  let lo = min ?? Math.min(...usable);
  let hi = max ?? Math.max(...usable);
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return log ? [1, 10] : [0, 1];
  if (lo === hi) [lo, hi] = log ? [lo / 2, hi * 2] : [lo - 1, hi + 1];
  return [lo, hi];
}

export function lineChart(series: readonly Series[], o: ChartOptions): string {
  const w = o.width ?? 720;
  const h = o.height ?? 340;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1]));
  const [x0, x1] = range(xs, o.xLog ?? false);
  const refs = (o.refLines ?? []).map((r) => r.y);
  const [y0, y1] = range([...ys, ...refs], o.yLog ?? false, o.yMin, o.yMax);
  const x = {
    lo: x0,
    hi: x1,
    log: o.xLog ?? false,
    at: axis(x0, x1, o.xLog ?? false, M.left, w - M.right),
  };
  const y = {
    lo: y0,
    hi: y1,
    log: o.yLog ?? false,
    at: axis(y0, y1, o.yLog ?? false, h - M.bottom, M.top),
  };
  const lines = series
    .map((s) => {
      const pts = s.points
        .filter(([px, py]) => (!x.log || px > 0) && (!y.log || py > 0))
        .map(([px, py]) => `${x.at(px).toFixed(1)},${y.at(py).toFixed(1)}`)
        .join(" ");
      return `<polyline points="${pts}" fill="none" stroke="${s.color}" stroke-width="1.6"/>`;
    })
    .join("");
  const marks = (o.marks ?? [])
    .filter((m) => (!x.log || m.x > 0) && (!y.log || m.y > 0))
    .map(
      (m) =>
        `<circle cx="${x.at(m.x).toFixed(1)}" cy="${y.at(m.y).toFixed(1)}" r="4.5" ` +
        `fill="none" stroke="${m.color}" stroke-width="2"/>`,
    )
    .join("");
  return frame(o, grid(o, x, y) + lines + marks, series);
}

export function barChart(
  bars: readonly { label: string; value: number; color: string }[],
  o: ChartOptions,
): string {
  const w = o.width ?? 720;
  const h = o.height ?? 340;
  const refs = (o.refLines ?? []).map((r) => r.y);
  const [, y1] = range([0, ...bars.map((b) => b.value), ...refs], false, 0, o.yMax);
  const y = {
    lo: 0,
    hi: y1 * 1.05,
    log: false,
    at: axis(0, y1 * 1.05, false, h - M.bottom, M.top),
  };
  const slot = (w - M.left - M.right) / Math.max(1, bars.length);
  const rects = bars
    .map((b, i) => {
      const px = M.left + i * slot + slot * 0.15;
      const py = y.at(b.value);
      return (
        `<rect x="${px.toFixed(1)}" y="${py.toFixed(1)}" width="${(slot * 0.7).toFixed(1)}" ` +
        `height="${(h - M.bottom - py).toFixed(1)}" fill="${b.color}"/>` +
        `<text x="${(px + slot * 0.35).toFixed(1)}" y="${(py - 3).toFixed(1)}" text-anchor="middle">${fmt(b.value)}</text>`
      );
    })
    .join("");
  return frame(o, grid(o, null, y) + rects, bars);
}
