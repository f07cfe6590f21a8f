import { describe, expect, it } from "vitest";
import { chainHash } from "../chunk-hash.ts";
import type { Priority, RouteRequest } from "../route-request.ts";
import { CoreRouter } from "../router/core-router.ts";
import type { AdmissionSettings } from "../settings/admission-settings.ts";
import { parsePool } from "../settings/parse-settings.ts";
import { Admission, type Settled } from "./admission.ts";

/** Two origins prefilling 1,000 tokens/s: a 1,024-token prompt queues about 1 s of work. */
function pool() {
  return parsePool({
    origins: ["a", "b"].map((id) => ({ id, url: `http://${id}.test` })),
    prefillTokensPerSecond: 1000,
  });
}

/** A prompt of 16 chunks (1,024 tokens) no other prompt shares. */
function prompt(family: number, client?: { key: string; priority: Priority }): RouteRequest {
  const hashes: number[] = [];
  let h = family * 7919 + 1;
  for (let i = 0; i < 16; i++) {
    h = chainHash(h, i);
    hashes.push(h);
  }
  return { chunkHashes: hashes, promptTokens: 1024, client };
}

const SETTINGS: AdmissionSettings = { maxWaitMs: 500, queueTimeoutMs: 5000, maxQueued: 10 };

/** A router and admission over it (`null`: admission off), and what it settled. */
function setup(settings: AdmissionSettings | null = SETTINGS) {
  const router = new CoreRouter(pool(), { model: "m" });
  const settled = new Map<string, Settled>();
  const admission = new Admission(router, settings ?? undefined, (id, s) => settled.set(id, s));
  return { router, admission, settled };
}

function ticketOf(s: Settled | { kind: "queued" } | undefined): string {
  if (s?.kind !== "routed" || s.decision.ticket === null) throw new Error("not routed");
  return s.decision.ticket;
}

const interactive = (key: string) => ({ key, priority: "interactive" as const });
const batch = (key: string) => ({ key, priority: "batch" as const });

describe("Admission", () => {
  it("routes at once while an origin has room, then holds the request at the router", () => {
    const { admission } = setup();
    expect(admission.offer("1", prompt(1), 0).kind).toBe("routed");
    expect(admission.offer("2", prompt(2), 0).kind).toBe("routed");
    // Both origins now hold about 1 s of prefill work: past the 500 ms objective.
    expect(admission.offer("3", prompt(3), 0)).toEqual({ kind: "queued" });
    expect(admission.waiting).toBe(1);
  });

  it("binds a waiting request when it leaves, to the origin that has room then (late binding)", () => {
    const { admission, router, settled } = setup();
    const first = admission.offer("1", prompt(1), 0);
    const second = admission.offer("2", prompt(2), 100);
    expect(admission.offer("3", prompt(3), 200).kind).toBe("queued");
    // At arrival "3" would have gone where "1" is (it drains first); "2"'s origin frees up.
    router.complete(ticketOf(second), { ok: true }, 300);
    admission.pump(300);
    const third = settled.get("3");
    expect(third?.kind).toBe("routed");
    if (third?.kind !== "routed" || second.kind !== "routed" || first.kind !== "routed") return;
    expect(third.decision.origin).toBe(second.decision.origin);
    expect(third.decision.origin).not.toBe(first.decision.origin);
    expect(third.waitedMs).toBe(100);
  });

  it("wakes up when the queue estimate drains to the objective, and admits then", () => {
    const { admission, settled } = setup();
    admission.offer("1", prompt(1), 0);
    admission.offer("2", prompt(2), 0);
    admission.offer("3", prompt(3), 0);
    const wake = admission.wakeAt(0) as number;
    // About 1,090 ms of work over 1,000 tokens/s (the prompt's, plus the decode term for the
    // 1,024 tokens in flight: pool-wait.ts), less the 500 ms objective.
    expect(wake).toBeGreaterThan(500);
    expect(wake).toBeLessThan(600);
    admission.pump(wake - 10);
    expect(settled.has("3")).toBe(false);
    admission.pump(wake);
    expect(settled.get("3")?.kind).toBe("routed");
    expect(admission.wakeAt(wake)).toBeNull();
  });

  it("sheds a request still waiting after queueTimeoutMs with 503 and Retry-After", () => {
    const { admission, settled } = setup({ ...SETTINGS, maxWaitMs: 0, queueTimeoutMs: 300 });
    admission.offer("1", prompt(1), 0);
    admission.offer("2", prompt(2), 0);
    admission.offer("3", prompt(3), 0);
    expect(admission.wakeAt(0)).toBe(300);
    admission.pump(300);
    const shed = settled.get("3");
    expect(shed).toMatchObject({ kind: "shed", shed: { reason: "queue-timeout", status: 503 } });
    if (shed?.kind === "shed") {
      expect(shed.shed.waitedMs).toBe(300);
      expect(shed.shed.retryAfterMs).toBeGreaterThanOrEqual(1000);
    }
  });

  it("bug: a timeout that rounds short in floating point spun wakeAt at the same instant", () => {
    // (since + 1000) - since is 999.9999999999964 here: the deadline wakeAt names must count
    // as reached when it comes, or wakeAt names the same instant again and the caller spins.
    const since = 32_758.780_241_815_26;
    const { admission, settled } = setup({ ...SETTINGS, maxWaitMs: 0, queueTimeoutMs: 1000 });
    admission.offer("1", prompt(1), since);
    admission.offer("2", prompt(2), since);
    admission.offer("3", prompt(3), since);
    const wake = admission.wakeAt(since) as number;
    expect(wake).toBe(since + 1000);
    admission.pump(wake);
    expect(settled.get("3")).toMatchObject({ kind: "shed", shed: { reason: "queue-timeout" } });
    expect(admission.wakeAt(wake)).toBeNull();
  });

  it("sheds at once a newcomer that would wait past the timeout at the recent admission rate", () => {
    const { admission, router } = setup({ maxWaitMs: 0, queueTimeoutMs: 1500, maxQueued: 100 });
    // Measure a rate: one admission a second for 20 s (each completes before the next).
    for (let t = 0; t < 20_000; t += 1000) {
      router.complete(ticketOf(admission.offer(`warm${t}`, prompt(t), t)), { ok: true }, t + 1);
    }
    admission.offer("x", prompt(100), 20_000);
    admission.offer("y", prompt(101), 20_000);
    expect(admission.offer("q1", prompt(102), 20_000).kind).toBe("queued");
    const answers = [103, 104, 105].map((f) => admission.offer(`q${f}`, prompt(f), 20_000));
    const shed = answers.find((a) => a.kind === "shed");
    expect(shed).toMatchObject({ kind: "shed", shed: { reason: "queue-wait", waitedMs: 0 } });
  });

  it("a full room: batch gives its place to interactive, and a batch newcomer is shed", () => {
    const { admission, settled } = setup({ ...SETTINGS, maxQueued: 2 });
    admission.offer("1", prompt(1), 0);
    admission.offer("2", prompt(2), 0);
    admission.offer("b1", prompt(3, batch("k")), 0);
    admission.offer("b2", prompt(4, batch("k")), 1);
    expect(admission.offer("i1", prompt(5, interactive("k")), 2).kind).toBe("queued");
    expect(settled.get("b2")).toMatchObject({ shed: { reason: "displaced", status: 503 } });
    expect(admission.offer("i2", prompt(6, interactive("k")), 3).kind).toBe("queued");
    expect(settled.get("b1")).toMatchObject({ shed: { reason: "displaced", status: 503 } });
    expect(admission.offer("b3", prompt(7, batch("k")), 4)).toMatchObject({
      kind: "shed",
      shed: { reason: "queue-full", status: 503 },
    });
  });

  it("admits batch only within half the objective, keeping headroom for interactive", () => {
    const { admission } = setup({ ...SETTINGS, maxWaitMs: 1600 });
    admission.offer("1", prompt(1), 0);
    admission.offer("2", prompt(2), 0);
    // Each origin's wait is about 1.1 s: within 1.6 s, past half of it.
    expect(admission.offer("b", prompt(3, batch("k")), 0).kind).toBe("queued");
    expect(admission.offer("i", prompt(4, interactive("k")), 0).kind).toBe("routed");
  });

  it("interactive requests leave the room before batch ones that came first", () => {
    const { admission, router, settled } = setup();
    const a = admission.offer("1", prompt(1), 0);
    admission.offer("2", prompt(2), 0);
    admission.offer("b", prompt(3, batch("k")), 1);
    admission.offer("i", prompt(4, interactive("k")), 2);
    router.complete(ticketOf(a), { ok: true }, 10);
    admission.pump(10);
    expect(settled.get("i")?.kind).toBe("routed");
    expect(settled.has("b")).toBe(false);
  });

  it("keys share the room: a flooding key gives way (429) and is served in turn", () => {
    const { admission, router, settled } = setup({ ...SETTINGS, maxQueued: 4 });
    const a = admission.offer("1", prompt(1), 0);
    admission.offer("2", prompt(2), 0);
    for (let i = 0; i < 4; i++) admission.offer(`f${i}`, prompt(10 + i, interactive("flood")), 1);
    // The room is full of one key's requests: another key's newcomer takes the newest's place.
    expect(admission.offer("l", prompt(20, interactive("light")), 2).kind).toBe("queued");
    expect(settled.get("f3")).toMatchObject({ shed: { reason: "over-share", status: 429 } });
    // The flooding key's own newcomer is refused, with 429: it holds more than its share.
    expect(admission.offer("f4", prompt(14, interactive("flood")), 3)).toMatchObject({
      shed: { reason: "over-share", status: 429 },
    });
    // Served in turn: the light key's request goes second, not fourth.
    router.complete(ticketOf(a), { ok: true }, 10);
    admission.pump(10);
    expect(settled.get("f0")?.kind).toBe("routed");
    const f0 = settled.get("f0");
    if (f0?.kind === "routed") router.complete(ticketOf(f0), { ok: true }, 11);
    admission.pump(11);
    expect(settled.get("l")?.kind).toBe("routed");
    expect(settled.has("f1")).toBe(false);
  });

  it("one key alone in a full room is told 503 (the pool is full), not 429", () => {
    const { admission } = setup({ ...SETTINGS, maxQueued: 1 });
    admission.offer("1", prompt(1), 0);
    admission.offer("2", prompt(2), 0);
    admission.offer("3", prompt(3), 0);
    expect(admission.offer("4", prompt(4), 0)).toMatchObject({
      shed: { reason: "queue-full", status: 503 },
    });
  });

  it("a waiting client that leaves frees its place", () => {
    const { admission, settled } = setup({ ...SETTINGS, maxQueued: 1 });
    admission.offer("1", prompt(1), 0);
    admission.offer("2", prompt(2), 0);
    admission.offer("3", prompt(3), 0);
    expect(admission.leave("3")).toBe(true);
    expect(admission.leave("3")).toBe(false);
    expect(admission.offer("4", prompt(4), 1).kind).toBe("queued");
    expect(settled.has("3")).toBe(false);
    expect(admission.stats(1).left).toBe(1);
  });

  it("without settings routes everything at once; turning it off releases the room", () => {
    const off = setup(null);
    for (let i = 0; i < 5; i++)
      expect(off.admission.offer(`${i}`, prompt(i), 0).kind).toBe("routed");
    const { admission, settled } = setup();
    for (let i = 0; i < 4; i++) admission.offer(`${i}`, prompt(i), 0);
    expect(admission.waiting).toBe(2);
    admission.configure(undefined, 1);
    expect(admission.waiting).toBe(0);
    expect(settled.get("3")?.kind).toBe("routed");
  });

  it("never holds a request while an origin has nothing in flight", () => {
    // A prefill speed set far too low: the estimate says hours, but origin b is idle.
    const router = new CoreRouter(
      parsePool({
        origins: ["a", "b"].map((id) => ({ id, url: `http://${id}.test` })),
        prefillTokensPerSecond: 1,
      }),
      { model: "m" },
    );
    const admission = new Admission(router, SETTINGS, () => {});
    expect(admission.offer("1", prompt(1), 0).kind).toBe("routed");
    expect(admission.offer("2", prompt(2), 0).kind).toBe("routed");
    expect(admission.offer("3", prompt(3), 0).kind).toBe("queued");
  });

  it("refuses a settle callback that calls back into admission", () => {
    const router = new CoreRouter(pool(), { model: "m" });
    const admission: Admission = new Admission(router, { ...SETTINGS, maxQueued: 1 }, (id) =>
      admission.offer(`${id}-again`, prompt(9), 0),
    );
    admission.offer("1", prompt(1), 0);
    admission.offer("2", prompt(2), 0);
    admission.offer("3", prompt(3, batch("k")), 0);
    expect(() => admission.offer("4", prompt(4), 0)).toThrow(/called back/);
  });
});
