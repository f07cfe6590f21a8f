/** What admission is told of a keyed request (client-access.ts, `routeClient`). */
import { describe, expect, it } from "vitest";
import type { Priority } from "../../core/route-request.ts";
import { routeClient } from "./client-access.ts";
import type { ClientKeyRecord } from "./key-record.ts";

const key = (priority: Priority): ClientKeyRecord => ({
  id: "0123456789abcdef",
  hash: "0".repeat(64),
  name: "k",
  models: ["*"],
  priority,
  limits: { requestsPerMinute: null, promptTokensPerMinute: null },
  createdAt: 0,
});

describe("routeClient", () => {
  it("shares by the key's id; x-router-priority may lower an interactive key to batch, never raise a batch key", () => {
    const cases: [Priority, Priority, Priority][] = [
      ["interactive", "interactive", "interactive"],
      ["interactive", "batch", "batch"],
      ["batch", "interactive", "batch"],
      ["batch", "batch", "batch"],
    ];
    for (const [keyPriority, requested, expected] of cases) {
      expect(routeClient(key(keyPriority), requested)).toEqual({
        key: "0123456789abcdef",
        priority: expected,
      });
    }
  });
});
