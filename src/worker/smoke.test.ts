import { env, exports } from "cloudflare:workers";
import { expect, it } from "vitest";

it("smoke", async () => {
  const r = await exports.default.fetch("http://x/");
  expect(await r.text()).toBe("ok");
  const stub = env.ROUTER.getByName("m");
  expect(await stub.ping()).toBe("pong");
});
