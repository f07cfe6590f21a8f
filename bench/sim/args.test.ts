import { describe, expect, it } from "vitest";
import { DEFAULT_TRACE, outputPaths, parseCli, UsageError } from "./args.ts";

describe("parseCli", () => {
  it("defaults to the bundled conversation trace, 8 origins, load 0.8, every policy", () => {
    const o = parseCli([]);
    expect(o.spec.source).toEqual({ kind: "mooncake", path: DEFAULT_TRACE });
    expect(o.spec.origins).toBe(8);
    expect(o.spec.load).toBe(0.8);
    expect(o.policies).toHaveLength(10);
    expect(o.threads).toBe(2);
    expect(outputPaths(o, o.slug).json).toMatch(
      /bench\/results\/conversation_trace-8o-load0\.8\.json$/,
    );
    expect(outputPaths(o, o.slug).html).toMatch(/load0\.8\.html$/);
  });

  it("reads a synthetic workload, with --limit as its size", () => {
    const o = parseCli(["--format", "synthetic:rag", "--limit", "50", "--policies", "cost,llm-d"]);
    expect(o.spec.source).toEqual({ kind: "synthetic", name: "rag", count: 50, seed: 1 });
    expect(o.spec.trace).toBe("synthetic:rag");
    expect(o.policies).toEqual(["cost", "llm-d"]);
  });

  it("runs --seeds consecutive seeds from --seed", () => {
    expect(parseCli([]).seeds).toEqual([1]);
    expect(parseCli(["--seed", "5", "--seeds", "3"]).seeds).toEqual([5, 6, 7]);
  });

  it.each([
    [["--seeds", "0"], /--seeds must be a number in \[1, 100\]/],
    [["--origins", "0"], /--origins must be a number in \[1, 256\]/],
    [["--load", "x"], /--load must be a number/],
    [["--policies", "cost,nope"], /unknown policy "nope"/],
    [["--format", "synthetic:nope"], /known generators are rag/],
    [["--trace", "/nonexistent.jsonl"], /no such file/],
    [["--threads", "3"], /--threads must be a number in \[0, 2\]/],
    [["--arrivals", "later"], /--arrivals must be jitter, spread, burst/],
  ])("rejects %j", (argv, message) => {
    expect(() => parseCli(argv)).toThrow(UsageError);
    expect(() => parseCli(argv)).toThrow(message);
  });
});
