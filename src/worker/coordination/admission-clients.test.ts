/**
 * Admission as clients meet it through the Worker's entry point, in both coordination modes
 * (issue 24, items 1 and 2): a client that reuses its `x-request-id` (a retry) is admitted or
 * shed like any other request, and a held client that disconnects leaves the queue. The
 * client's disconnect reaches the Worker here as it does on Cloudflare (`request.signal`, the
 * `enable_request_signal` flag): the caller aborts its fetch. `wrangler dev` does not pass a
 * disconnect on (docs/api.md, "Admission").
 */
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { AdmissionStats } from "../../core/admission/admission.ts";
import type { Coordination } from "../../core/settings/edge-settings.ts";
import type { RequestLogLine } from "../request-record/request-record.ts";
import {
  admin,
  chat,
  conversation,
  drain,
  hits,
  origin,
  pool,
  putSettings,
  releaseHeld,
  waitFor,
} from "../test/helpers.ts";

const MODES: readonly Coordination[] = ["object", "edge"];
const model = (what: string, mode: Coordination) => `adm-clients-${what}-${mode}`;
/** The pool's one origin (it holds each answer until released). */
const originOf = (what: string, mode: Coordination) => `acl-${what}-${mode[0]}`;

/**
 * One origin that prefills 1 token/s and holds its answers: once it serves a request, every
 * other waits (maxWaitMs 0), one at most (maxQueued 1).
 */
const heldPool = (what: string, mode: Coordination) =>
  pool([origin(originOf(what, mode), "hold")], {
    coordination: mode,
    ...(mode === "edge" ? { edge: { flushMs: 10, warmMs: 0 } } : {}),
    prefillTokensPerSecond: 1,
    admission: { maxWaitMs: 0, queueTimeoutMs: 30_000, maxQueued: 1 },
  });

beforeAll(async () => {
  const pools: Record<string, ReturnType<typeof heldPool>> = {};
  for (const mode of MODES) {
    for (const what of ["reuse", "left"]) pools[model(what, mode)] = heldPool(what, mode);
  }
  await putSettings({ pools });
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Whether `promise` is still pending after `ms`. */
async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const marker = Symbol("pending");
  const timer = new Promise((resolve) => setTimeout(() => resolve(marker), ms));
  return (await Promise.race([promise.catch(() => null), timer])) === marker;
}

/** The pool's admission as operators see it: the object's, or this isolate's replica's. */
async function admissionOf(name: string): Promise<AdmissionStats | undefined> {
  const res = await admin(`/admin/state?model=${name}`);
  const state = (await res.json()) as {
    object: { admission?: AdmissionStats } | null;
    replica?: { admission: AdmissionStats } | null;
  };
  return state.replica?.admission ?? state.object?.admission;
}

/** Release the held origin until `res` (a streamed answer) has ended. */
async function finish(name: string, res: Response): Promise<void> {
  const body = drain(res);
  await waitFor(async () => {
    await releaseHeld(name);
    return !(await pendingAfter(body, 50));
  });
}

describe.each(MODES)("admission in %s mode, as clients meet it", (mode) => {
  it("a reused x-request-id neither bypasses admission nor answers 500: it is shed as a fresh id is", async () => {
    const name = model("reuse", mode);
    const id = { headers: { "x-request-id": `retry-${mode}` } };
    const first = await chat(name, conversation("one", 1), { stream: true, ...id });
    expect(first.status).toBe(200);
    // The room holds one: the retry of the same id waits there.
    const held = chat(name, conversation("two", 1), { stream: true, ...id });
    expect(await pendingAfter(held, 100)).toBe(true);
    // The room is full: another retry of the same id is shed, as one with a fresh id is.
    const again = await chat(name, conversation("three", 1), { stream: true, ...id });
    const fresh = await chat(name, conversation("four", 1), { stream: true });
    for (const res of [again, fresh]) {
      expect(res.status).toBe(503);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("overloaded");
      expect(body.error.message).toContain("queue-full");
    }
    expect(await hits(originOf("reuse", mode))).toBe(1);
    await finish(originOf("reuse", mode), first);
    const second = await held;
    expect(second.status).toBe(200);
    expect(second.headers.get("x-request-id")).toBe(`retry-${mode}`);
    await finish(originOf("reuse", mode), second);
    expect(await hits(originOf("reuse", mode))).toBe(2);
  });

  it("a held client that disconnects leaves the queue, is logged client_left, and never reaches an origin", async () => {
    const name = model("left", mode);
    const lines: RequestLogLine[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => {
      if (typeof line === "string" && line.includes('"msg":"llm_request"')) {
        lines.push(JSON.parse(line) as RequestLogLine);
      }
    });
    const first = await chat(name, conversation("one", 1), { stream: true });
    expect(first.status).toBe(200);
    const client = new AbortController();
    const leaving = chat(name, conversation("two", 1), {
      stream: true,
      headers: { "x-request-id": `leaver-${mode}` },
      signal: client.signal,
    });
    expect(await pendingAfter(leaving, 100)).toBe(true);
    client.abort();
    await expect(leaving).rejects.toMatchObject({ name: "AbortError" });
    await waitFor(() => lines.some((l) => l.requestId === `leaver-${mode}`), 5000, "its log line");
    expect(lines.find((l) => l.requestId === `leaver-${mode}`)).toMatchObject({
      status: 503,
      error: "client_left",
      origin: null,
    });
    // Its place is free.
    await waitFor(async () => (await admissionOf(name))?.left === 1, 5000, "the place freed");
    expect((await admissionOf(name))?.waiting).toEqual({ interactive: 0, batch: 0 });
    await finish(originOf("left", mode), first);
    expect(await hits(originOf("left", mode))).toBe(1);
  });
});
