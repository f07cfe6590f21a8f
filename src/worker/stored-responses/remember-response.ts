/**
 * Telling the pool's Durable Object that an origin stored a response (docs/api.md, "Stored
 * responses"): as soon as the answer has ended whole, before the request's report, in the
 * request's `waitUntil`. Both coordination modes keep them in the pool's object, so a
 * follow-up finds its origin whichever isolate it lands on. A failed call is logged: that
 * response's follow-up will get `previous_response_not_found`, and the client can resend the
 * whole conversation.
 */
import { type PoolRef, poolStub } from "../objects/pool-stub.ts";

export function rememberResponse(
  env: Env,
  ctx: Pick<ExecutionContext, "waitUntil">,
  ref: PoolRef,
  id: string,
  origin: string,
): void {
  const stub = poolStub(env, ref);
  ctx.waitUntil(
    stub.rememberResponse(id, origin, ref.pool.storedResponses).catch((error: unknown) => {
      console.warn(`router ${ref.model}: stored response ${id} not remembered: ${String(error)}`);
    }),
  );
}
