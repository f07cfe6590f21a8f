/** Shared pieces of the P/D engine tests: engines on real sockets, requests, prompts. */
import { profileNamed } from "../../sim/engine/profiles.ts";
import { type RunningEngine, startEngineServer } from "../engine/engine-server.ts";
import type { PdEngineOptions } from "../engine/pd/pd-engine.ts";

export async function engine(
  id: string,
  pd: PdEngineOptions | undefined,
  log: string[] = [],
): Promise<RunningEngine> {
  return startEngineServer({
    id,
    port: 0,
    profile: profileNamed("llama-3.1-8b-h100"),
    timeScale: 100,
    pd,
    log: (line) => log.push(line),
  });
}

/** A chat body whose prompt is `words` distinct words about `topic` (about 2 tokens a word). */
export function chatBody(topic: string, extra: Record<string, unknown> = {}, words = 400) {
  const content = Array.from({ length: words }, (_, i) => `${topic}${i}`).join(" ");
  return { model: "m", messages: [{ role: "user", content }], max_tokens: 4, ...extra };
}

export interface Answer {
  status: number;
  /** The JSON answer, or for a stream, its events (`[DONE]` left out). */
  json: Record<string, unknown>;
  events: Record<string, unknown>[];
}

export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!(res.headers.get("content-type") ?? "").includes("event-stream"))
    return { status: res.status, json: JSON.parse(text), events: [] };
  const events = text
    .split("\n\n")
    .filter((e) => e.startsWith("data: ") && e !== "data: [DONE]")
    .map((e) => JSON.parse(e.slice(6)));
  return { status: res.status, json: {}, events };
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

export const usageOf = (json: Record<string, unknown>) => json.usage as Usage;
export const cachedOf = (json: Record<string, unknown>) =>
  usageOf(json).prompt_tokens_details?.cached_tokens ?? 0;
