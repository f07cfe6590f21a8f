import { describe, expect, it } from "vitest";
import { parseSettings } from "./parse-settings.ts";

const url = (id: string) => `http://${id}.test:8000`;
const both = (id: string) => ({ id, url: url(id) });
const prefill = (id: string, pd: Record<string, unknown> = { protocol: "vllm-nixl" }) => ({
  id,
  url: url(id),
  role: "prefill",
  pd,
});
const decode = (id: string, pd: Record<string, unknown> = { protocol: "vllm-nixl" }) => ({
  id,
  url: url(id),
  role: "decode",
  pd,
});
const doc = (origins: unknown[], pool: Record<string, unknown> = {}) => ({
  pools: { llama: { origins, ...pool } },
});

describe("P/D settings", () => {
  it("fills the disaggregation rule's defaults", () => {
    const result = parseSettings(doc([prefill("p"), decode("d")]));
    expect(result.ok && result.value.pools.llama?.disaggregation).toEqual({
      minUncachedTokens: 2048,
      maxUncachedFraction: 1,
      prefillBusyMs: 100,
      prefillServesWhole: false,
    });
  });

  // Each row: a pool that must be accepted.
  const valid: [string, unknown][] = [
    ["a vllm-nixl pair", doc([prefill("p"), decode("d")])],
    [
      "an sglang pair with the prefill's bootstrap port and host",
      doc([
        prefill("p", { protocol: "sglang", bootstrapPort: 9000, engineHost: "10.0.0.5" }),
        decode("d", { protocol: "sglang" }),
      ]),
    ],
    [
      "an llmd-sidecar prefill reached at another host and port",
      doc([
        prefill("p", { protocol: "llmd-sidecar", engineHost: "10.0.0.5:8200" }),
        decode("d", { protocol: "llmd-sidecar" }),
      ]),
    ],
    [
      "an IPv6 engine host",
      doc([prefill("p", { protocol: "vllm-nixl", engineHost: "[fd00::5]" }), decode("d")]),
    ],
    ["decode origins alone (they serve alone)", doc([decode("d1"), decode("d2")])],
    ["aggregated origins beside a P/D pair", doc([both("a"), prefill("p"), decode("d")])],
    [
      "vllm-nixl prefill origins serving whole",
      doc([prefill("p"), decode("d")], { disaggregation: { prefillServesWhole: true } }),
    ],
    [
      "sglang prefill origins told not to serve whole (they cannot)",
      doc([prefill("p", { protocol: "sglang" }), decode("d", { protocol: "sglang" })], {
        disaggregation: { prefillServesWhole: false },
      }),
    ],
    [
      "llm-d prefill pods (vLLM) the router reaches, serving whole",
      doc([prefill("p", { protocol: "llmd-sidecar" }), decode("d", { protocol: "llmd-sidecar" })], {
        disaggregation: { prefillServesWhole: true },
      }),
    ],
    [
      "a rule that always disaggregates",
      doc([prefill("p"), decode("d")], {
        disaggregation: { minUncachedTokens: 0, maxUncachedFraction: 0, prefillBusyMs: 3_600_000 },
      }),
    ],
  ];

  it.each(valid)("accepts %s", (_name, input) => {
    const result = parseSettings(input);
    expect(result.ok ? [] : result.errors).toEqual([]);
  });

  // Each row: a pool with one bad combination, and the field the error must name.
  const invalid: [string, unknown, string][] = [
    [
      "a prefill origin without pd",
      doc([{ ...both("p"), role: "prefill" }, decode("d")]),
      "origins[0].pd",
    ],
    [
      "a decode origin without pd",
      doc([prefill("p"), { ...both("d"), role: "decode" }]),
      "origins[1].pd",
    ],
    ["pd on a both origin", doc([{ ...both("a"), pd: { protocol: "sglang" } }]), "origins[0].pd"],
    [
      "an unknown protocol",
      doc([prefill("p", { protocol: "mooncake" }), decode("d")]),
      "origins[0].pd.protocol",
    ],
    [
      "an unknown pd field",
      doc([prefill("p", { protocol: "sglang", room: 1 }), decode("d", { protocol: "sglang" })]),
      "origins[0].pd.room",
    ],
    ["prefill origins and no decode origin", doc([prefill("p1"), prefill("p2")]), "origins"],
    ["prefill origins beside aggregated ones only", doc([both("a"), prefill("p")]), "origins"],
    [
      "mixed protocols",
      doc([prefill("p"), decode("d", { protocol: "sglang" })]),
      "origins[1].pd.protocol",
    ],
    [
      "a bootstrap port on vllm-nixl",
      doc([prefill("p", { protocol: "vllm-nixl", bootstrapPort: 8998 }), decode("d")]),
      "origins[0].pd.bootstrapPort",
    ],
    [
      "a bootstrap port on an sglang decode origin",
      doc([
        prefill("p", { protocol: "sglang" }),
        decode("d", { protocol: "sglang", bootstrapPort: 8998 }),
      ]),
      "origins[1].pd.bootstrapPort",
    ],
    [
      "a bootstrap port out of range",
      doc([
        prefill("p", { protocol: "sglang", bootstrapPort: 70000 }),
        decode("d", { protocol: "sglang" }),
      ]),
      "origins[0].pd.bootstrapPort",
    ],
    [
      "an engine host on a decode origin",
      doc([prefill("p"), decode("d", { protocol: "vllm-nixl", engineHost: "10.0.0.6" })]),
      "origins[1].pd.engineHost",
    ],
    [
      "an engine host with a path",
      doc([prefill("p", { protocol: "vllm-nixl", engineHost: "10.0.0.5/x" }), decode("d")]),
      "origins[0].pd.engineHost",
    ],
    [
      "an engine host with a port out of range",
      doc([
        prefill("p", { protocol: "llmd-sidecar", engineHost: "h:0" }),
        decode("d", { protocol: "llmd-sidecar" }),
      ]),
      "origins[0].pd.engineHost",
    ],
    [
      "an engine host with a port on sglang (the port is bootstrapPort)",
      doc([
        prefill("p", { protocol: "sglang", engineHost: "10.0.0.5:8998" }),
        decode("d", { protocol: "sglang" }),
      ]),
      "origins[0].pd.engineHost",
    ],
    [
      "a negative uncached threshold",
      doc([prefill("p"), decode("d")], { disaggregation: { minUncachedTokens: -1 } }),
      "disaggregation.minUncachedTokens",
    ],
    [
      "an uncached fraction above 1",
      doc([prefill("p"), decode("d")], { disaggregation: { maxUncachedFraction: 1.5 } }),
      "disaggregation.maxUncachedFraction",
    ],
    [
      "a busy threshold that is not whole",
      doc([prefill("p"), decode("d")], { disaggregation: { prefillBusyMs: 0.5 } }),
      "disaggregation.prefillBusyMs",
    ],
    [
      "sglang prefill origins serving whole (a prefill-mode server decodes one token)",
      doc([prefill("p", { protocol: "sglang" }), decode("d", { protocol: "sglang" })], {
        disaggregation: { prefillServesWhole: true },
      }),
      "disaggregation.prefillServesWhole",
    ],
    [
      "an unknown rule field",
      doc([prefill("p"), decode("d")], { disaggregation: { mode: "always" } }),
      "disaggregation.mode",
    ],
  ];

  it.each(invalid)("rejects %s, naming the field", (_name, input, field) => {
    const result = parseSettings(input);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => e.field)).toContain(`pools.llama.${field}`);
    for (const e of result.errors) expect(e.reason.length).toBeGreaterThan(3);
  });
  it("a P/D pool coordinates through its object: edge replicas claim one origin per request", () => {
    const result = parseSettings(doc([prefill("p"), decode("d")], { coordination: "edge" }));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.errors.map((e) => e.field)).toContain("pools.llama.coordination");
  });
});
