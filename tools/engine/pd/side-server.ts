/**
 * The private channel between two simulated engines of a P/D pair (NIXL's side channel, SGLang's
 * bootstrap server): a small JSON-over-HTTP server on a port of its own. Only engines dial it;
 * the router never does. Each request is `POST <path>` with a JSON body, or `GET <path>`.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface SideReply {
  readonly status: number;
  readonly body: unknown;
}

/** Answers one request; `signal` aborts when the caller hangs up. */
export type SideHandler = (
  method: string,
  path: string,
  body: unknown,
  signal: AbortSignal,
) => Promise<SideReply>;

export interface SideServer {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on("data", (part: Buffer) => {
      size += part.length;
      if (size <= MAX_BODY) parts.push(part);
    });
    req.on("end", () => {
      try {
        resolve(parts.length === 0 ? null : JSON.parse(Buffer.concat(parts).toString("utf8")));
      } catch {
        resolve(null);
      }
    });
    req.on("error", () => resolve(null));
  });
}

export function startSideServer(
  host: string,
  port: number,
  handle: SideHandler,
): Promise<SideServer> {
  const server: Server = createServer(async (req, res) => {
    const gone = new AbortController();
    res.on("close", () => gone.abort());
    const body = await readJson(req);
    const reply = await handle(
      req.method ?? "GET",
      (req.url ?? "/").split("?")[0] ?? "/",
      body,
      gone.signal,
    );
    if (gone.signal.aborted) return;
    const text = JSON.stringify(reply.body);
    res.writeHead(reply.status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text),
    });
    res.end(text);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      resolve({
        host,
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Call another engine's side server; a network failure or timeout is an `Error`. */
export async function callSide(
  url: string,
  init: { method: "GET" | "POST"; body?: unknown; timeoutMs: number; signal: AbortSignal },
): Promise<SideReply> {
  const signal = AbortSignal.any([init.signal, AbortSignal.timeout(init.timeoutMs)]);
  const res = await fetch(url, {
    method: init.method,
    headers: init.body === undefined ? {} : { "content-type": "application/json" },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal,
  });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the caller sees null.
  }
  return { status: res.status, body };
}
