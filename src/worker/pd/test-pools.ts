/** Shared pieces of the P/D worker tests: P/D origins, rules, request bodies, the object's state. */
import type { PdProtocol } from "../../core/settings/pd-settings.ts";
import { call, conversation, objectState, outstanding, waitFor } from "../test/helpers.ts";

/** Always disaggregate (no uncached-token threshold, never too busy). */
export const ALWAYS = { minUncachedTokens: 0, prefillBusyMs: 3_600_000 } as const;

export function pdRole(
  protocol: PdProtocol,
  role: "prefill" | "decode",
  pd: { engineHost?: string; bootstrapPort?: number } = {},
) {
  return { role, pd: { protocol, ...pd } };
}

/**
 * A chat body as the client's exact bytes: pretty-printed, so that a leg built from these bytes
 * can be told from one serialised again.
 */
export function clientBody(model: string, topic: string, extra: Record<string, unknown> = {}) {
  return JSON.stringify({ model, messages: conversation(topic, 1), ...extra }, null, 1);
}

/** The client's bytes with `fields` appended inside the object, as a decode leg carries them. */
export function appended(text: string, fields: Record<string, unknown>): string {
  const end = text.lastIndexOf("}");
  return `${text.slice(0, end)},${JSON.stringify(fields).slice(1, -1)}${text.slice(end)}`;
}

export function post(body: string, headers: Record<string, string> = {}): Promise<Response> {
  return call("/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

/** The object's state once every request it routed has ended. */
export async function settledState(model: string) {
  await waitFor(async () => (await outstanding(model)) === 0, 5000, `${model} to settle`);
  const state = await objectState(model);
  if (!state) throw new Error(`no state for ${model}`);
  return state.router;
}
