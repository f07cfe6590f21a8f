import { describe, expect, it } from "vitest";
import { AdmissionRate } from "./admission-rate.ts";

describe("AdmissionRate", () => {
  it("reads a steady rate from its first seconds, not biased low while young", () => {
    const rate = new AdmissionRate(10_000);
    for (let t = 0; t < 2000; t += 100) rate.add(t);
    expect(rate.perMs(2000) * 1000).toBeGreaterThan(9);
    expect(rate.perMs(2000) * 1000).toBeLessThan(11);
  });

  it("follows a change of rate within its window, and is 0 before any event", () => {
    const rate = new AdmissionRate(10_000);
    expect(rate.perMs(5)).toBe(0);
    for (let t = 0; t < 60_000; t += 100) rate.add(t);
    for (let t = 60_000; t < 100_000; t += 1000) rate.add(t);
    expect(rate.perMs(100_000) * 1000).toBeGreaterThan(0.9);
    expect(rate.perMs(100_000) * 1000).toBeLessThan(1.5);
  });
});
