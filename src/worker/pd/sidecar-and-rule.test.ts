import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { poolSettings } from "../../core/settings/settings-schema.ts";
import { hits, origin, originBase, pool, putSettings, received } from "../test/helpers.ts";
import { ALWAYS, clientBody, pdRole, post, settledState } from "./test-pools.ts";

const sidecar = (role: "prefill" | "decode", engineHost?: string) =>
  pdRole("llmd-sidecar", role, engineHost ? { engineHost } : {});
const nixl = (role: "prefill" | "decode") => pdRole("vllm-nixl", role);
const NEWER_DECODE = origin("nw-d", "pd-decode", nixl("decode"));

beforeAll(async () => {
  await putSettings({
    pools: {
      llmd: pool(
        [
          origin("ld-p", "ok", sidecar("prefill", "10.1.2.5:8200")),
          origin("ld-d", "ok", sidecar("decode")),
        ],
        { disaggregation: ALWAYS },
      ),
      "llmd-url": pool(
        [origin("lu-p", "ok", sidecar("prefill")), origin("lu-d", "ok", sidecar("decode"))],
        { disaggregation: ALWAYS },
      ),
      "llmd-decode-500": pool(
        [
          origin("lf-p", "ok", sidecar("prefill")),
          origin("lf-d1", "fail500", sidecar("decode")),
          origin("lf-d2", "ok", sidecar("decode")),
        ],
        { disaggregation: ALWAYS, policy: { type: "round-robin" } },
      ),
      "pd-newer": pool([origin("nw-p1", "pd-prefill", nixl("prefill")), NEWER_DECODE], {
        disaggregation: ALWAYS,
      }),
      "pd-rule": pool(
        [
          origin("ru-p", "pd-prefill", nixl("prefill")),
          origin("ru-d", "pd-decode", nixl("decode")),
        ],
        { disaggregation: { minUncachedTokens: 64, prefillBusyMs: 3_600_000 } },
      ),
      "pd-whole": pool(
        [
          origin("wh-p", "pd-prefill", nixl("prefill")),
          origin("wh-d", "pd-decode", nixl("decode")),
        ],
        { disaggregation: { prefillServesWhole: true }, policy: { type: "round-robin" } },
      ),
    },
  });
});

describe("llmd-sidecar", () => {
  it("sends the decode origin the client's request with the router's x-prefiller-host-port", async () => {
    const body = clientBody("llmd", "sidecar");
    const res = await post(body, { "x-prefiller-host-port": "evil.example:1" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-router-origin")).toBe("ld-d");
    expect(res.headers.get("x-router-prefill-origin")).toBe("ld-p");
    expect(res.headers.get("x-router-pd")).toBe("remote");
    await res.text();
    const [decode] = await received("ld-d");
    expect(decode!.body).toBe(body);
    expect(decode!.headers["x-prefiller-host-port"]).toBe("10.1.2.5:8200");
    expect(await hits("ld-p")).toBe(0);
    // The sidecar answers no prefill usage, and a decode's count is not a cache hit.
    expect((await settledState("llmd")).accuracy.reports).toBe(0);
  });

  it("names the prefill origin's URL host and port when it sets no engineHost", async () => {
    await (await post(clientBody("llmd-url", "url"))).text();
    const [decode] = await received("lu-d");
    expect(decode!.headers["x-prefiller-host-port"]).toBe(new URL(originBase).host);
  });

  it("fails a decode origin over without the header", async () => {
    const bodies = [clientBody("llmd-decode-500", "one"), clientBody("llmd-decode-500", "two")];
    const answers = await Promise.all(bodies.map((b) => post(b)));
    const failedOver = answers.find((r) => r.headers.get("x-router-attempts") === "2");
    expect(failedOver?.headers.get("x-router-pd")).toBe("decode-failed");
    await Promise.all(answers.map((r) => r.text()));
    const headers = (await received("lf-d2")).map((r) => r.headers["x-prefiller-host-port"]);
    expect(headers.filter((h) => h === undefined)).toHaveLength(1);
    expect(headers.filter((h) => h !== undefined)).toHaveLength(1);
  });
});

describe("the disaggregation rule, as the Worker serves it", () => {
  it("a prompt the decode origin holds is served there alone (local-cached)", async () => {
    const body = clientBody("pd-rule", "cached");
    const first = await post(body);
    expect(first.headers.get("x-router-pd")).toBe("remote");
    await first.text();
    const again = await post(body);
    expect(again.headers.get("x-router-pd")).toBe("local-cached");
    expect(again.headers.get("x-router-prefill-origin")).toBeNull();
    await again.text();
    expect(await hits("ru-p")).toBe(1);
    expect((await received("ru-d")).at(-1)?.body).toBe(body);
  });

  it("a request for several choices is not disaggregated (n>1)", async () => {
    const res = await post(clientBody("pd-rule", "choices", { n: 2 }));
    expect(res.headers.get("x-router-pd")).toBe("n>1");
    expect(res.headers.get("x-router-origin")).toBe("ru-d");
    await res.text();
    const state = await settledState("pd-rule");
    expect(state.pd.byReason).toEqual({ "pd:remote": 1, "pd:local-cached": 1, "pd:n>1": 1 });
  });

  it("an idle prefill origin serves a short request whole: the client's bytes, one leg (whole-on-prefill)", async () => {
    // Round-robin over the decode origin and the idle prefill origin: one request each.
    const served = [];
    for (const topic of ["first", "second"]) {
      const body = clientBody("pd-whole", topic);
      const res = await post(body);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-router-prefill-origin")).toBeNull();
      served.push({
        body,
        origin: res.headers.get("x-router-origin"),
        pd: res.headers.get("x-router-pd"),
      });
      await res.text();
    }
    const whole = served.find((s) => s.origin === "wh-p");
    expect(whole?.pd).toBe("whole-on-prefill");
    expect(served.find((s) => s.origin === "wh-d")?.pd).toBe("local-cached");
    // The prefill origin got one ordinary request: the client's bytes, no kv_transfer_params.
    const legs = await received("wh-p");
    expect(legs.map((l) => l.body)).toEqual([whole?.body]);
    const state = await settledState("pd-whole");
    expect(state.pd.byReason).toEqual({ "pd:whole-on-prefill": 1, "pd:local-cached": 1 });
    // It taught the index as any request served alone does.
    expect(state.accuracy.reports).toBe(2);
  });
});

describe("an object with newer settings than this isolate", () => {
  it("names a prefill origin this isolate cannot reach: the isolate routes alone (fallback-settings)", async () => {
    const model = "pd-newer";
    await (await post(clientBody(model, "warm"))).text();
    // The object now holds later settings whose only prefill origin this isolate does not know.
    const newer = poolSettings.parse(
      pool([origin("nw-p2", "pd-prefill", nixl("prefill")), NEWER_DECODE], {
        disaggregation: ALWAYS,
      }),
    );
    await env.ROUTER.getByName(model).applySettings(model, newer, {
      revision: Date.now() + 60_000,
      fingerprint: "newer",
    });
    const res = await post(clientBody(model, "newer"));
    expect(res.headers.get("x-router-reason")).toBe("fallback-settings");
    // The isolate's own router decided, over the origins it knows.
    expect(res.headers.get("x-router-prefill-origin")).toBe("nw-p1");
    await res.text();
    expect(await hits("nw-p2")).toBe(0);
  });
});
