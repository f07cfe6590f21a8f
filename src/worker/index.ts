/** The Worker's entry point: the Hono app for HTTP and the pool's Durable Object class. */
import { app } from "./http/app.ts";

export { RouterObject } from "./pool-object/router-object.ts";

export default { fetch: app.fetch } satisfies ExportedHandler<Env>;
