/**
 * Global setup of the worker tests (runs in Node, not workerd): starts the test origins
 * (origin-server.node.ts, which documents their behaviours) and gives their addresses to the
 * tests through `inject`.
 */
import type { TestProject } from "vitest/node";
import { startTestOrigins } from "./origin-server.node.ts";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const origins = await startTestOrigins();
  project.provide("originBase", origins.base);
  project.provide("refusedBase", origins.refusedBase);
  return origins.close;
}
