import { describe, expect, it } from "vitest";
import { DEFAULT_TRACE, outputPaths, parseCli, UsageError } from "./args.ts";

describe("parseCli", () => {
  it("defaults to the bundled conversation trace, 8 origins, load 0.8, every policy", () => {
    const o = parseCli([]);
    expect(o.spec.source).toEqual({ kind: "mooncake", path: DEFAULT_TRACE });
    expect(o.spec.origins).toBe(8);
    expect(o.spec.load).toBe(0.8);
    expect(o.policies).toHaveLength(11);
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

  it("reads the information model's flags", () => {
    const o = parseCli(["--prefill-calibration", "0.7, 1,1.3", "--engine-delay", "25"]);
    expect(o.spec.prefillCalibration).toEqual([0.7, 1, 1.3]);
    expect(o.spec.engineDelayMs).toBe(25);
    expect(parseCli([]).spec).toMatchObject({ prefillCalibration: [1], engineDelayMs: 10 });
  });

  it("builds a P/D fleet from --pd, with the disaggregation mode and the rule's overrides", () => {
    const o = parseCli(["--pd", "2:6", "--output-scale", "4", "--min-uncached", "512"]);
    expect(o.spec.origins).toBe(8);
    expect(o.spec.outputScale).toBe(4);
    expect(o.spec.pd).toEqual({
      prefill: 2,
      decode: 6,
      mode: "conditional",
      rule: { minUncachedTokens: 512 },
    });
    expect(o.slug).toBe("conversation_trace-8o-pd2x6-conditional-out4-load0.8");
    expect(parseCli(["--pd", "1:3", "--disaggregation", "always"]).spec.pd?.mode).toBe("always");
    expect(parseCli([]).spec.pd).toBeNull();
  });

  it("reads bench:pd's modes", () => {
    expect(parseCli([], "bench:pd")).toMatchObject({ modes: ["conditional", "always"] });
    expect(parseCli(["--modes", "never"], "bench:pd")).toMatchObject({ modes: ["never"] });
  });

  it("an option of another bench CLI was ignored (bench --slo started a full replay): refused, named (issue 24)", () => {
    expect(() => parseCli(["--slo", "p95:2000"])).toThrow(UsageError);
    expect(() => parseCli(["--slo", "p95:2000"])).toThrow("Unknown option '--slo'");
    expect(() => parseCli(["--sizes", "2,4"], "bench:pd")).toThrow("Unknown option '--sizes'");
    expect(() => parseCli(["--modes", "never"], "bench:fleet")).toThrow("Unknown option '--modes'");
    expect(() => parseCli(["--load", "0.5"], "bench:capacity")).toThrow("Unknown option '--load'");
    expect(parseCli(["--slo", "p95:2000"], "bench:capacity").slo).toBe("p95:2000");
  });

  it("a mistyped option was a stack trace (ERR_PARSE_ARGS_UNKNOWN_OPTION): a UsageError naming it", () => {
    expect(() => parseCli(["--seeed", "2"])).toThrow(UsageError);
    expect(() => parseCli(["--seeed", "2"])).toThrow("Unknown option '--seeed'");
    expect(() => parseCli(["--seed"])).toThrow(UsageError);
    expect(() => parseCli(["stray"])).toThrow("Unexpected argument 'stray'");
  });

  it("runs --seeds consecutive seeds from --seed", () => {
    expect(parseCli([]).seeds).toEqual([1]);
    expect(parseCli(["--seed", "5", "--seeds", "3"]).seeds).toEqual([5, 6, 7]);
  });

  it("sets the origins from --fleet, and --split and NAME@tuned for bench:capacity", () => {
    const o = parseCli(["--fleet", "h100:2,a100:4,l40s:2", "--split", "report"], "bench:capacity");
    expect(o.spec.origins).toBe(8);
    expect(o.spec.fleet).toEqual([
      { gpu: "h100", count: 2 },
      { gpu: "a100", count: 4 },
      { gpu: "l40s", count: 2 },
    ]);
    expect(o.split).toBe("report");
    expect(o.slug).toMatch(/-h100x2-a100x4-l40sx2-/);
    expect(parseCli([]).split).toBeNull();
    expect(() => parseCli(["--split", "test"], "bench:capacity")).toThrow(
      /--split must be tune or report/,
    );
    expect(() => parseCli(["--split", "tune"])).toThrow(/Unknown option '--split'/);
    expect(() => parseCli(["--fleet", "h100:2"], "bench:fleet")).toThrow(
      /Unknown option '--fleet'/,
    );
    expect(() => parseCli(["--policies", "dynamo@tuned"])).toThrow(
      /only bench:capacity takes NAME@tuned/,
    );
    expect(parseCli(["--policies", "dynamo@tuned"], "bench:capacity").policies).toEqual(["dynamo"]);
  });

  it.each([
    [["--fleet", "h100:2", "--origins", "4"], /--fleet h100:2 is 2 origins, not 4/],
    [["--fleet", "h100:2", "--profile", "llama-3.1-8b-h100"], /not with --pd or --profile/],
    [["--fleet", "b200:2"], /--fleet must be KIND:COUNT/],
    [["--fleet-prior", "exact"], /--fleet-prior needs --fleet/],
    [["--fleet", "h100:1", "--fleet-prior", "best"], /--fleet-prior must be mean or exact/],
    [["--seeds", "0"], /--seeds must be a number in \[1, 100\]/],
    [["--pd", "2-6"], /--pd must be PREFILL:DECODE/],
    [["--pd", "0:6"], /--pd must be a number in \[1, 255\]/],
    [["--pd", "2:6", "--origins", "16"], /--pd 2:6 is 8 origins, not 16/],
    [["--pd", "2:6", "--disaggregation", "sometimes"], /--disaggregation must be conditional/],
    [["--disaggregation", "always"], /--disaggregation needs --pd/],
    [
      ["--pd", "2:6", "--disaggregation", "never", "--min-uncached", "1"],
      /for --disaggregation conditional/,
    ],
    [
      ["--pd", "2:6", "--max-uncached-fraction", "2"],
      /--max-uncached-fraction must be a number in \[0, 1\]/,
    ],
    [["--output-scale", "0"], /--output-scale must be a number/],
    [["--origins", "0"], /--origins must be a number in \[1, 256\]/],
    [["--load", "x"], /--load must be a number/],
    [["--policies", "cost,nope"], /unknown policy "nope"/],
    [["--format", "synthetic:nope"], /known generators are rag/],
    [["--trace", "/nonexistent.jsonl"], /no such file/],
    [["--threads", "3"], /--threads must be a number in \[0, 2\]/],
    [["--arrivals", "later"], /--arrivals must be jitter, spread, burst/],
    [["--prefill-calibration", "0.7,x"], /--prefill-calibration must be a number/],
    [["--prefill-calibration", "1,1"], /lists a factor twice/],
    [["--engine-delay", "1e9"], /--engine-delay must be a number in \[0, 600000\]/],
  ])("rejects %j", (argv, message) => {
    expect(() => parseCli(argv)).toThrow(UsageError);
    expect(() => parseCli(argv)).toThrow(message);
  });

  it("rejects bench:pd's unknown mode", () => {
    expect(() => parseCli(["--modes", "sometimes"], "bench:pd")).toThrow(
      /--modes: unknown mode "sometimes"/,
    );
  });
});
