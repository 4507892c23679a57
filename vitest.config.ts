import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig, type ViteUserConfig } from "vitest/config";
import { fakeUpstream } from "./test/support/fake-upstream.ts";

/** Bindings the tests run with, on top of wrangler.toml's development values. */
export const TEST_VARS = {
  // Cheap Argon2id so suites that create many accounts stay fast; production parameters are
  // the default and have a test of their own.
  ARGON2_MEMORY_KIB: "64",
  ARGON2_ITERATIONS: "1",
  BOOTSTRAP_SUPERUSER_EMAIL: "admin@relab.test",
  BOOTSTRAP_SUPERUSER_PASSWORD: "bootstrap-password-for-tests",
};

export default defineConfig(async (): Promise<ViteUserConfig> => {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  return {
    test: {
      // The Worker logs one JSON line per request; show them only for tests that fail.
      silent: "passed-only",
      projects: [
        {
          plugins: [
            cloudflareTest({
              main: "./src/index.ts",
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: { ...TEST_VARS, TEST_MIGRATIONS: migrations },
                outboundService: fakeUpstream,
              },
            }),
          ],
          test: {
            name: "workers",
            include: ["test/**/*.test.ts"],
            exclude: ["test/node/**"],
            setupFiles: ["./test/setup/apply-migrations.ts"],
          },
        },
        {
          test: { name: "node", include: ["test/node/**/*.test.ts"], environment: "node" },
        },
      ],
    },
  };
});
