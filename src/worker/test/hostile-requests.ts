/**
 * What the fuzz files share: a hostile request as generated (any method, path, headers and
 * bytes), sending it as a client could (or not at all when no client could build it), the
 * secrets no answer may carry, and printable ASCII of a bounded length.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { call } from "./helpers.ts";

export interface Hostile {
  method: string;
  path: string;
  headers: [string, string][];
  body: string | Uint8Array;
}

/** The router's secrets, none of which an answer may contain. */
export const SECRETS = ["ADMIN_TOKEN", "WEBHOOK_SECRET", "METRICS_TOKEN", "TEST_ORIGIN_KEY"].map(
  (name) => (env as unknown as Record<string, string>)[name] as string,
);

export const printable = (maxLength: number) =>
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength,
  });

/** Send it as a client could; undefined when no client could (the Request is invalid). */
export function send(req: Hostile): Promise<Response> | undefined {
  let init: RequestInit;
  try {
    init = {
      method: req.method,
      headers: new Headers(req.headers),
      body: req.method === "GET" ? null : req.body,
    };
    new Request("https://router.test/", init);
  } catch {
    return undefined;
  }
  return call(req.path, init);
}
