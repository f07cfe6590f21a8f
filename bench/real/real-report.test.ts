import { describe, expect, it } from "vitest";
import { fittedProfile } from "./fitted-sim.ts";
import { type Figures, targets } from "./real-report.ts";

const figures = (policy: string, cachedFraction: number, ttftP50Ms: number): Figures => ({
  policy,
  requests: 10,
  failed: 0,
  cachedFraction,
  ttftP50Ms,
  ttftP90Ms: 2 * ttftP50Ms,
  perOrigin: [5, 5],
  wallMs: 1000,
});

describe("bench:real targets", () => {
  it("checks cost against round-robin, failures, the simulator's ranking and cached fractions", () => {
    const real = [figures("cost", 0.6, 400), figures("round-robin", 0.25, 1000)];
    const sim = [figures("cost", 0.65, 300), figures("round-robin", 0.4, 900)];
    const met = Object.fromEntries(targets(real, sim).map((t) => [t.name, t.met]));
    expect(met).toEqual({
      "cost's cached fraction >= 2x round-robin's": true,
      "cost's TTFT p50 <= 0.5x round-robin's": true,
      "zero failed requests": true,
      "simulator ranks the policies as the real run (TTFT p50)": true,
      "simulator's cached fraction within 0.1 (cost)": true,
      "simulator's cached fraction within 0.1 (round-robin)": false,
    });
  });

  it("a simulator that ranks the policies the other way misses", () => {
    const real = [figures("cost", 0.6, 400), figures("round-robin", 0.25, 1000)];
    const sim = [figures("cost", 0.6, 900), figures("round-robin", 0.25, 300)];
    const ranking = targets(real, sim).find((t) => t.name.startsWith("simulator ranks"));
    expect(ranking?.met).toBe(false);
  });
});

describe("fittedProfile", () => {
  it("converts the engines' byte tokens to the router's 4-byte tokens", () => {
    const p = fittedProfile({
      prefillTokensPerSecond: 300,
      decodeMsPerToken: 30,
      cachedTokens: 12_288,
      slots: 2,
      batchTokens: 2048,
      tokensPerByte: 1,
    });
    expect(p.prefillTokensPerSecond).toBe(75);
    expect(p.weightsReadMs).toBe(30);
    expect(p.kvCapacityTokens).toBe(3072);
    expect(p.maxBatchedTokens).toBe(512);
    expect(p.maxSeqs).toBe(2);
  });
});
