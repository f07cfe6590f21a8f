/**
 * @module
 * Prometheus text exposition (format 0.0.4,
 * https://prometheus.io/docs/instrumenting/exposition_formats/): families declared once with
 * `# HELP` and `# TYPE`, their samples grouped under them whatever order they are added in,
 * label values escaped, histograms as cumulative `_bucket{le}` plus `_sum` and `_count`.
 * Misuse (a bad name, a counter without `_total`, a family declared twice with another type)
 * throws: it is a bug in the caller, caught by the tests, never a runtime condition.
 */
import type { HistogramData } from "../pool-metrics/histogram.ts";

export type Labels = Readonly<Record<string, string>>;
export type MetricType = "counter" | "gauge" | "histogram";

/** A family's name, type and help text, declared once (see `metricFamily`). */
export interface MetricFamily {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** A family definition, checked against the naming rules when the module loads. */
export function metricFamily(name: string, type: MetricType, help: string): MetricFamily {
  if (!METRIC_NAME.test(name)) throw new Error(`bad metric name ${name}`);
  if (type === "counter" && !name.endsWith("_total")) {
    throw new Error(`counter ${name} must end in _total`);
  }
  if (type !== "counter" && name.endsWith("_total")) {
    throw new Error(`${type} ${name} must not end in _total`);
  }
  return { name, type, help };
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([name, value]) => {
    if (!LABEL_NAME.test(name) || name.startsWith("__")) throw new Error(`bad label ${name}`);
    return `${name}="${escapeLabel(value)}"`;
  });
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

export class MetricsWriter {
  #lines = new Map<MetricFamily, string[]>();

  #family(family: MetricFamily, type: MetricType): string[] {
    if (family.type !== type) throw new Error(`${family.name} is a ${family.type}, not a ${type}`);
    let lines = this.#lines.get(family);
    if (!lines) {
      if ([...this.#lines.keys()].some((f) => f.name === family.name)) {
        throw new Error(`metric ${family.name} defined twice`);
      }
      lines = [];
      this.#lines.set(family, lines);
    }
    return lines;
  }

  /** Show the family (HELP and TYPE) even if no sample follows. */
  declare(family: MetricFamily): void {
    this.#family(family, family.type);
  }

  /** A counter's or a gauge's sample. */
  sample(family: MetricFamily, labels: Labels, value: number): void {
    if (family.type === "histogram") throw new Error(`${family.name} is a histogram`);
    this.#family(family, family.type).push(
      `${family.name}${labelText(labels)} ${formatValue(value)}`,
    );
  }

  histogram(family: MetricFamily, labels: Labels, data: HistogramData): void {
    const lines = this.#family(family, "histogram");
    const name = family.name;
    let cumulative = 0;
    data.bounds.forEach((bound, i) => {
      cumulative += data.counts[i] ?? 0;
      lines.push(`${name}_bucket${labelText({ ...labels, le: formatValue(bound) })} ${cumulative}`);
    });
    lines.push(`${name}_bucket${labelText({ ...labels, le: "+Inf" })} ${data.count}`);
    lines.push(`${name}_sum${labelText(labels)} ${formatValue(data.sum)}`);
    lines.push(`${name}_count${labelText(labels)} ${data.count}`);
  }

  text(): string {
    let out = "";
    for (const [f, lines] of this.#lines) {
      out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
      for (const line of lines) out += `${line}\n`;
    }
    return out;
  }
}
