/**
 * Fault injection against real local origins (see origins.node.ts): an origin that hangs before
 * its headers, stalls after them or mid-body, dies mid-stream, redirects, or loses its client.
 * Each test checks what the client sees and that the pool's object counts nothing outstanding
 * afterwards (load and leases back to zero), and where the router must close the origin's
 * connection, that the origin saw it closed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { STEERING_HEADERS } from "../test/fixture.ts";
import {
  chat,
  objectState,
  origin,
  outstanding,
  pool,
  putSettings,
  waitFor,
} from "../test/helpers.ts";

// Round-robin sends a fresh pool's first request to its first origin: the one under test.
const RR = { policy: { type: "round-robin" as const }, retry: { backoffMs: 10 } };

beforeAll(async () => {
  await putSettings({
    pools: {
      headers: pool([origin("fa-headers")], RR),
    },
  });
});

const hello = [{ role: "user", content: "hello" }];

async function settled(model: string) {
  await waitFor(async () => (await outstanding(model)) === 0, 5000, `${model} load to return to 0`);
  return (await objectState(model))?.router;
}

describe("headers toward origins", () => {
  it("client headers that steer P/D routing (SSRF into the GPU network) or carry a key never reach the origin", async () => {
    const headers = Object.fromEntries(STEERING_HEADERS.map((name) => [name, "10.0.0.66:8000"]));
    const res = await chat("headers", hello, { headers: { ...headers, "x-custom": "kept" } });
    expect(res.status).toBe(200);
    const seen = JSON.parse(res.headers.get("x-test-received") ?? "{}");
    expect(seen["x-custom"]).toBe("kept");
    for (const name of STEERING_HEADERS) expect(seen[name], name).toBeUndefined();
    await res.text();
    await settled("headers");
  });
});
