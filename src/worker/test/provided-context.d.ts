/** Values the worker tests' global setup provides (see origins.node.ts). */
declare module "vitest" {
  interface ProvidedContext {
    /** Base URL of the test origin server; behaviour is chosen by path (see origins.node.ts). */
    originBase: string;
    /** An address where nothing listens: connections are refused. */
    refusedBase: string;
  }
}

export {};
