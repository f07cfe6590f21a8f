import { describe, expect, it } from "vitest";
import { createReporter } from "./reporter.ts";

/** An engine whose /health answers and whose /metrics hangs until the caller gives up. */
const busyEngine: typeof fetch = async (input, init) => {
  const url = String(input);
  if (url.endsWith("/health")) return new Response("ok");
  if (url.endsWith("/metrics")) {
    return new Promise<Response>((_, reject) => {
      init?.signal?.addEventListener("abort", () => reject(new Error("timed out")));
    });
  }
  return Response.json({ ok: true });
};

describe("reporter", () => {
  it("a llama-server busy prefilling (health answers, /metrics waits) is not reported down", async () => {
    // llama-server answers /metrics from its task queue, after the batch in progress: a long
    // prefill holds it for seconds while /health answers at once.
    const reporter = createReporter({
      engine: "http://engine.test",
      kind: "llamacpp",
      origin: "cpu-a",
      router: "http://router.test",
      secret: "s",
      intervalMs: 200,
      fetch: busyEngine,
    });
    for (let k = 0; k < 5; k++) {
      const { events } = await reporter.tick();
      expect(events).toEqual([]);
    }
  });
});
