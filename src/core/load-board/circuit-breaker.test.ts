import { describe, expect, it } from "vitest";
import { CircuitBreaker } from "./circuit-breaker.ts";

const options = { failureThreshold: 3, cooldownMs: 1000 };

describe("CircuitBreaker", () => {
  it("opens after the threshold of consecutive failures, not before", () => {
    const c = new CircuitBreaker();
    c.onFailure(0, options);
    c.onFailure(1, options);
    expect(c.state(2, options)).toBe("closed");
    c.onSuccess();
    c.onFailure(3, options);
    c.onFailure(4, options);
    expect(c.allows(5, options)).toBe(true);
    c.onFailure(5, options);
    expect(c.state(6, options)).toBe("open");
    expect(c.allows(6, options)).toBe(false);
  });

  it("half-opens after the cool-down and lets exactly one probe through", () => {
    const c = new CircuitBreaker();
    for (let i = 0; i < 3; i++) c.onFailure(100, options);
    expect(c.allows(1099, options)).toBe(false);
    expect(c.state(1100, options)).toBe("half-open");
    expect(c.allows(1100, options)).toBe(true);
    c.onSend(1100, options);
    expect(c.allows(1101, options)).toBe(false);
  });

  it("a failed probe reopens for a full cool-down; a good one closes", () => {
    const c = new CircuitBreaker();
    for (let i = 0; i < 3; i++) c.onFailure(0, options);
    c.onSend(1000, options);
    c.onFailure(1500, options);
    expect(c.state(2400, options)).toBe("open");
    expect(c.state(2500, options)).toBe("half-open");
    c.onSend(2500, options);
    c.onSuccess();
    expect(c.state(2501, options)).toBe("closed");
    expect(c.consecutiveFailures).toBe(0);
  });

  it("an abandoned probe frees the half-open slot", () => {
    const c = new CircuitBreaker();
    for (let i = 0; i < 3; i++) c.onFailure(0, options);
    c.onSend(1000, options);
    c.onAbandon();
    expect(c.allows(1001, options)).toBe(true);
  });
});
