import { beforeAll, describe, expect, it } from "vitest";
import { CACHED_TOKENS, PD_PREFILL_CACHED } from "../test/fixture.ts";
import { aborted, origin, pool, putSettings, received } from "../test/helpers.ts";
import { bootstrapRoom } from "./sglang.ts";
import { ALWAYS, appended, clientBody, pdRole, post, settledState } from "./test-pools.ts";

const sglang = (
  role: "prefill" | "decode",
  pd: { engineHost?: string; bootstrapPort?: number } = {},
) => pdRole("sglang", role, pd);

beforeAll(async () => {
  await putSettings({
    pools: {
      sglang: pool(
        [
          origin("sg-p", "sgl-prefill", sglang("prefill", { engineHost: "10.1.2.4" })),
          origin("sg-d", "sgl-decode", sglang("decode")),
        ],
        { disaggregation: ALWAYS },
      ),
      "sglang-prefill-500": pool(
        [
          origin("s5-p", "fail500", sglang("prefill", { bootstrapPort: 9000 })),
          origin("s5-d", "sgl-decode", sglang("decode")),
        ],
        { disaggregation: ALWAYS },
      ),
      "sglang-decode-500": pool(
        [
          origin("sf-p", "sgl-prefill", sglang("prefill")),
          origin("sf-d1", "fail500", sglang("decode")),
          origin("sf-d2", "sgl-decode", sglang("decode")),
        ],
        { disaggregation: ALWAYS, policy: { type: "round-robin" } },
      ),
    },
  });
});

describe("sglang", () => {
  it("sends both legs at once with one bootstrap room; the decode leg streams", async () => {
    const body = clientBody("sglang", "rooms", {
      stream: true,
      stream_options: { include_usage: true },
    });
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("x-router-pd")).toBe("remote");
    expect(res.headers.get("x-router-prefill-origin")).toBe("sg-p");
    // The test origins answer only once both legs of a room arrived: they were sent at once.
    const text = await res.text();
    expect(text).toContain(`"cached_tokens":${PD_PREFILL_CACHED}`);
    const [prefill] = await received("sg-p");
    const [decode] = await received("sg-d");
    const room = JSON.parse(decode!.body).bootstrap_room;
    expect(Number.isSafeInteger(room)).toBe(true);
    const bootstrap = { bootstrap_host: "10.1.2.4", bootstrap_port: 8998, bootstrap_room: room };
    expect(decode!.body).toBe(appended(body, bootstrap));
    const { stream_options, ...client } = JSON.parse(body);
    expect(stream_options).toBeDefined();
    expect(JSON.parse(prefill!.body)).toEqual({ ...client, ...bootstrap, stream: false });
    expect(prefill!.headers["x-request-id"]).toBe(decode!.headers["x-request-id"]);
    const state = await settledState("sglang");
    expect(state.accuracy.cachedTokens).toBe(PD_PREFILL_CACHED);
  });

  it("draws rooms below 2^53, all different", () => {
    const rooms = new Set(Array.from({ length: 1000 }, bootstrapRoom));
    expect(rooms.size).toBe(1000);
    for (const room of rooms) expect(Number.isSafeInteger(room) && room >= 0).toBe(true);
    expect(Math.max(...rooms)).toBeGreaterThan(2 ** 50);
  });

  it("a failed prefill leg aborts the decode leg waiting in its room; the decode serves alone", async () => {
    const body = clientBody("sglang-prefill-500", "alone");
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-pd")).toBe("prefill-failed");
    expect(res.headers.get("x-router-origin")).toBe("s5-d");
    await res.text();
    const legs = await received("s5-d");
    expect(JSON.parse(legs[0]!.body).bootstrap_port).toBe(9000);
    // The leg in the room was abandoned; then the client's own bytes, alone.
    expect(await aborted("s5-d")).toBe(1);
    expect(legs.map((l) => l.body).slice(1)).toEqual([body]);
    const state = await settledState("sglang-prefill-500");
    expect(state.pd.prefillFailed).toBe(1);
    expect(state.accuracy.cachedTokens).toBe(CACHED_TOKENS);
  });

  it("a failed decode leg aborts the prefill leg waiting in its room; an alternate serves alone", async () => {
    const bodies = [clientBody("sglang-decode-500", "one"), clientBody("sglang-decode-500", "two")];
    const answers = await Promise.all(bodies.map((b) => post(b)));
    const failedOver = answers.find((r) => r.headers.get("x-router-attempts") === "2");
    expect(failedOver?.headers.get("x-router-origin")).toBe("sf-d2");
    expect(failedOver?.headers.get("x-router-pd")).toBe("decode-failed");
    expect(failedOver?.headers.get("x-router-prefill-origin")).toBeNull();
    await Promise.all(answers.map((r) => r.text()));
    expect(await aborted("sf-p")).toBe(1);
    const alone = (await received("sf-d2")).filter((r) => bodies.includes(r.body));
    expect(alone).toHaveLength(1);
  });
});
