/**
 * Shared pieces of the worker tests (they run inside workerd): requests through the Worker's
 * real entry point, settings written through the admin API, webhook signing, polling.
 */
import { env, exports } from "cloudflare:workers";
import { inject } from "vitest";
import type { PoolSettingsInput, SettingsInput } from "../../core/settings/settings-schema.ts";
import { SIGNATURE_HEADER, signatureHeader } from "../../core/webhook-signature.ts";
import type { ReceivedRequest } from "./fixture.ts";

export const originBase = inject("originBase");
export const refusedBase = inject("refusedBase");

/** An origin of the test server (see origins.node.ts) with the given behaviour. */
export function origin(id: string, behaviour = "ok", extra: Record<string, unknown> = {}) {
  return { id, url: `${originBase}/${behaviour}/${id}`, ...extra };
}

/**
 * A pool over `origins`, open to clients without a key (`access: "open"`) unless `extra` says
 * otherwise: most tests route without keys; the closed default has tests of its own.
 */
export function pool(
  origins: PoolSettingsInput["origins"],
  extra: Partial<PoolSettingsInput> = {},
) {
  return { origins, access: "open", ...extra } satisfies PoolSettingsInput;
}

/** A request to the Worker; redirects are not followed, so a test sees what a client would. */
export function call(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(
    new Request(`https://router.test${path}`, { redirect: "manual", ...init }),
  );
}

export function admin(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${env.ADMIN_TOKEN}`);
  return call(path, { ...init, headers });
}

export async function putSettings(settings: SettingsInput): Promise<void> {
  const res = await admin("/admin/settings", { method: "PUT", body: JSON.stringify(settings) });
  if (res.status !== 200) throw new Error(`PUT /admin/settings: ${res.status} ${await res.text()}`);
}

export function chat(
  model: string,
  messages: unknown[],
  options: { stream?: boolean; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Response> {
  return call("/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", ...options.headers },
    body: JSON.stringify({ model, messages, stream: options.stream ?? false }),
    signal: options.signal ?? null,
  });
}

/** `POST /v1/messages` (Anthropic Messages) with `body` as JSON, `max_tokens` 64 unless set. */
export function messages(
  body: Record<string, unknown>,
  options: { headers?: Record<string, string>; path?: string } = {},
): Promise<Response> {
  return call(options.path ?? "/v1/messages", {
    method: "POST",
    headers: { "content-type": "application/json", ...options.headers },
    body: JSON.stringify({ max_tokens: 64, ...body }),
  });
}

/** A conversation: a long shared system prompt (`topic` makes it unique), then `turns` turns. */
export function conversation(topic: string, turns: number): unknown[] {
  const system = `You are the assistant for ${topic}. `.repeat(120);
  const messages: unknown[] = [{ role: "system", content: system }];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: "user", content: `question ${t} about ${topic}` });
    messages.push({ role: "assistant", content: `answer ${t} about ${topic}` });
  }
  messages.push({ role: "user", content: `final question about ${topic}` });
  return messages;
}

/** Read and discard the body, so the request completes. */
export async function drain(res: Response): Promise<string> {
  return await res.text();
}

export async function hits(name: string): Promise<number> {
  return Number(await (await fetch(`${originBase}/_hits/${name}`)).text());
}

/** Requests to the test origin `name` whose connection the router closed before they ended. */
export async function aborted(name: string): Promise<number> {
  return Number(await (await fetch(`${originBase}/_aborted/${name}`)).text());
}

/** What the test origin `name` received, request by request (path, headers, body). */
export async function received(name: string): Promise<ReceivedRequest[]> {
  return (await (await fetch(`${originBase}/_received/${name}`)).json()) as ReceivedRequest[];
}

export async function releaseHeld(name: string): Promise<void> {
  await (await fetch(`${originBase}/_release/${name}`)).text();
}

export function objectState(model: string) {
  return env.ROUTER.getByName(model).state();
}

/** Poll `check` until it returns true, or fail after `timeoutMs`. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 5000,
  what = "condition",
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Requests the pool's object counts as outstanding, summed over origins. */
export async function outstanding(model: string): Promise<number> {
  const state = await objectState(model);
  return state?.router.origins.reduce((sum, o) => sum + o.outstanding, 0) ?? 0;
}

/** The signature header for `body` at `timestamp`, as the reporter makes it. */
export function sign(body: string, timestamp: number, secret = env.WEBHOOK_SECRET) {
  return signatureHeader(secret, body, timestamp);
}

let lastBatchAt = 0;

/**
 * A webhook batch body as the reporter makes it: a fresh `id` and an `at` (ms) later than any
 * batch made before in this file, unless `at` is given.
 */
export function engineBatch(origin: string, events: unknown[], at?: number): string {
  if (at === undefined) lastBatchAt = Math.max(Date.now(), lastBatchAt + 1);
  return JSON.stringify({ origin, id: crypto.randomUUID(), at: at ?? lastBatchAt, events });
}

/** A signed webhook request, kept whole so a test can send it again as a replay would. */
export interface SignedBatch {
  body: string;
  signature: string;
}

export async function signBatch(body: string, timestamp = nowSeconds()): Promise<SignedBatch> {
  return { body, signature: await sign(body, timestamp) };
}

export function postSigned({ body, signature }: SignedBatch): Promise<Response> {
  return postEvents(body, signature);
}

export function postEvents(body: string, signature?: string): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (signature !== undefined) headers[SIGNATURE_HEADER] = signature;
  return call("/v1/engine/events", { method: "POST", headers, body });
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);
