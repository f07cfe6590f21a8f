import { DurableObject } from "cloudflare:workers";
export class RouterObject extends DurableObject {
  ping(): string {
    return "pong";
  }
}
export default { fetch: () => new Response("ok") } satisfies ExportedHandler;
