/**
 * @module
 * The one call protocol of every Durable Object here (settings/pool-version.ts): a call made
 * under settings the object does not hold yet answers `null`; the caller pushes the pool's
 * settings (`applySettings`) and makes the call once more. Used by the pool's object, a
 * coordinator's sync and the root's webhooks and exchanges, so the protocol is written once.
 */

/**
 * `call`'s answer; after a `null`, `push` then `call` again. A second `null` means the object
 * refused the settings it was just given: an error naming `what` (the object, for the log).
 */
export async function withSettings<T>(
  call: () => Promise<T | null>,
  push: () => Promise<void>,
  what: string,
): Promise<T> {
  const first = await call();
  if (first !== null) return first;
  await push();
  const second = await call();
  if (second === null) throw new Error(`${what} refused its settings`);
  return second;
}
