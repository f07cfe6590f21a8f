import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // The Worker logs a JSON line per LLM request; the tests that need them capture them.
    onConsoleLog: (log) => !log.includes('"msg":"llm_request"'),
    projects: [
      {
        test: {
          name: "core",
          environment: "node",
          include: [
            "src/core/**/*.test.ts",
            "sim/**/*.test.ts",
            "bench/**/*.test.ts",
            "tools/**/*.test.ts",
          ],
          // A hang guard, not a speed check: property tests take seconds on a loaded machine
          // (the radix index's once passed 5 s beside a benchmark).
          testTimeout: 30_000,
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            // Secrets and a short settings TTL for the tests (wrangler.toml lists the names).
            miniflare: {
              bindings: {
                ADMIN_TOKEN: "test-admin-token",
                WEBHOOK_SECRET: "test-webhook-secret",
                METRICS_TOKEN: "test-metrics-token",
                TEST_ORIGIN_KEY: "sk-origin-secret",
                SETTINGS_CACHE_MS: "200",
              },
            },
          }),
        ],
        test: {
          name: "worker",
          include: ["src/worker/**/*.test.ts"],
          // Real HTTP origins for the Worker to route to (src/worker/test/origins.node.ts).
          globalSetup: ["src/worker/test/origins.node.ts"],
          testTimeout: 20_000,
          hookTimeout: 20_000,
        },
      },
      {
        test: {
          // The real Worker under wrangler, real origins, headless Chromium (test/e2e/).
          name: "e2e",
          environment: "node",
          include: ["test/e2e/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
