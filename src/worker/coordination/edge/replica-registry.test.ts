/**
 * The isolate id a registry draws (issue 23, defect A): 128 random bits, so a new isolate never
 * meets an id still in its coordinator's ledger (edge-protocol.test.ts shows what one costs).
 */
import { describe, expect, it } from "vitest";
import { ReplicaRegistry } from "./replica-registry.ts";

describe("ReplicaRegistry.isolate", () => {
  it("defect A: an isolate draws a 128-bit id (22 base64url characters), not 32 bits", () => {
    const ids = Array.from({ length: 256 }, () => new ReplicaRegistry().isolate);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{21}[AQgw]$/);
    expect(new Set(ids).size).toBe(ids.length);
    const registry = new ReplicaRegistry();
    expect(registry.isolate).toBe(registry.isolate);
  });
});
