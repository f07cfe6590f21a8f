/**
 * What the real-engine end-to-end files start alike: llama.cpp servers on the project's tiny
 * random model (tools/llama), two slots and a small host cache each, and the Worker under
 * `wrangler dev` in front of them as one `cost` pool named `model`. Servers that started are
 * stopped again when another fails, so a file's afterAll has nothing half-made to clean.
 */
import { join } from "node:path";
import { type LlamaServer, startLlamaServer } from "../../tools/llama/llama-server.ts";
import { ensureModel } from "../../tools/llama/model.ts";
import type { Stack } from "../../tools/local-stack/stack.ts";
import { startE2eStack } from "./e2e-stack.ts";

export interface LlamaStack {
  readonly stack: Stack;
  readonly servers: readonly LlamaServer[];
  stop(): Promise<void>;
}

export async function startLlamaStack(
  binary: string,
  dir: string,
  ids: readonly string[],
  model: string,
): Promise<LlamaStack> {
  const weights = await ensureModel({ size: "tiny", dir: join(dir, "models") });
  const started = await Promise.allSettled(
    ids.map((id) =>
      startLlamaServer({ binary, model: weights, id, slots: 2, ctxTokens: 16384, cacheRamMiB: 16 }),
    ),
  );
  const servers = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const stopServers = () => Promise.allSettled(servers.map((s) => s.stop()));
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    await stopServers();
    throw failed.reason;
  }
  let stack: Stack;
  try {
    stack = await startE2eStack(dir, {
      origins: 0,
      external: servers.map((s) => ({ id: s.id, url: s.url })),
    });
  } catch (error) {
    await stopServers();
    throw error;
  }
  await stack.putSettings({
    pools: { [model]: { origins: stack.originSettings(), policy: { type: "cost" } } },
  });
  return {
    stack,
    servers,
    async stop() {
      await Promise.allSettled([stack.stop(), stopServers()]);
    },
  };
}
