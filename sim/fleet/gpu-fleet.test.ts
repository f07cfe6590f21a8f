import { describe, expect, it } from "vitest";
import { PROFILES } from "../engine/profiles.ts";
import { nominalProfile, originProfiles, parseFleet } from "./gpu-fleet.ts";

describe("mixed GPU fleets", () => {
  const fleet = parseFleet("h100:2,a100:4,l40s:2");
  const spec = { profile: "llama-3.1-8b-h100", origins: 8, fleet };

  it("gives each origin its kind's engine, in the order given", () => {
    expect(originProfiles(spec).map((p) => p.name)).toEqual([
      "llama-3.1-8b-h100",
      "llama-3.1-8b-h100",
      ...Array(4).fill("llama-3.1-8b-a100"),
      "llama-3.1-8b-l40s",
      "llama-3.1-8b-l40s",
    ]);
  });

  it("tells the router one speed: the fleet's mean, so --load 1 is the summed speed", () => {
    const speeds = originProfiles(spec).map((p) => p.prefillTokensPerSecond);
    const mean = speeds.reduce((a, b) => a + b, 0) / 8;
    expect(nominalProfile(spec).prefillTokensPerSecond).toBe(Math.round(mean));
    // Slower GPUs prefill slower: the prior is wrong for every kind.
    expect(PROFILES["llama-3.1-8b-a100"]?.prefillTokensPerSecond).toBeLessThan(mean);
    expect(PROFILES["llama-3.1-8b-h100"]?.prefillTokensPerSecond).toBeGreaterThan(mean);
  });

  it("rejects unknown kinds, counts and repeats with the flag's form", () => {
    expect(() => parseFleet("h100:2,v100:1")).toThrow(/KIND:COUNT/);
    expect(() => parseFleet("h100:0")).toThrow(/KIND:COUNT/);
    expect(() => parseFleet("h100:1,h100:2")).toThrow(/twice/);
  });
});
