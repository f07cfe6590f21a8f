/**
 * @module
 * The client key `npm start`'s replay sends. Its pools are open (the local stack sets
 * `access: "open"`), but a key made earlier against the same local state
 * (`.wrangler/start-state`) that named one of them, or `"*"`, makes that pool need a key for
 * good: revoking keys never reopens a pool. Every later `npm start` then failed each request
 * with a 401 and said nothing (issue 24). So the replay asks the router which of its pools a
 * client without a key may use (`GET /v1/models`); for the others it makes a key of its own,
 * says why and how to reopen them, and revokes the key when it is done.
 */
import type { Stack } from "../local-stack/stack.ts";

export interface ReplayKey {
  /** What the replay sends as its API key (ignored by open pools). */
  apiKey: string;
  /** Why a key was made, for the console; null when every pool was open. */
  note: string | null;
  /** Revoke the key made, if any. */
  revoke(): Promise<void>;
}

/** The pools of `models` that need a key: those `GET /v1/models` does not list without one. */
export async function poolsNeedingKey(routerUrl: string, models: string[]): Promise<string[]> {
  const res = await fetch(`${routerUrl}/v1/models`);
  // A key named "*": every pool needs one, the list included.
  if (res.status === 401) return models;
  if (!res.ok) throw new Error(`GET /v1/models: ${res.status} ${await res.text()}`);
  const listed = new Set(((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id));
  return models.filter((m) => !listed.has(m));
}

/** The command that reopens pool `model` (or every pool, `*`) in the local state `persistTo`. */
export const reopenCommand = (persistTo: string, model: string): string =>
  `npx wrangler kv key delete --binding SETTINGS --local --persist-to ${persistTo} 'client-keys:enforced:${model}'`;

export async function replayKey(
  stack: Stack,
  models: string[],
  persistTo: string,
): Promise<ReplayKey> {
  const closed = await poolsNeedingKey(stack.routerUrl, models);
  if (closed.length === 0) return { apiKey: "local", note: null, revoke: async () => {} };
  const admin = { authorization: `Bearer ${stack.secrets.ADMIN_TOKEN}` };
  const res = await fetch(`${stack.routerUrl}/admin/keys`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({ name: "npm start replay", models: closed }),
  });
  if (res.status !== 201) throw new Error(`POST /admin/keys: ${res.status} ${await res.text()}`);
  const { id, key } = (await res.json()) as { id: string; key: string };
  const note =
    `pools that need a client key here: ${closed.join(", ")} (a key made earlier in ` +
    `${persistTo} named them, or "*", and keys stay enforced after they are revoked). ` +
    `The replay uses a key of its own (${id}, revoked when it ends). To reopen a pool for ` +
    `clients without a key: ${reopenCommand(persistTo, "<model>")} (and ` +
    `'client-keys:enforced:*' if a key named "*"), or delete ${persistTo} to start afresh.`;
  return {
    apiKey: key,
    note,
    async revoke() {
      await fetch(`${stack.routerUrl}/admin/keys/${id}`, { method: "DELETE", headers: admin });
    },
  };
}
