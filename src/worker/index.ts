/**
 * The Worker's entry point: the Hono app for HTTP, the pool's Durable Object class, and edge
 * coordination's coordinator and root classes.
 */
import { app } from "./http/app.ts";

export { CoordinatorObject } from "./objects/coordinator-object.ts";
export { RootObject } from "./objects/root-object.ts";
export { RouterObject } from "./objects/router-object.ts";

export default { fetch: app.fetch } satisfies ExportedHandler<Env>;
