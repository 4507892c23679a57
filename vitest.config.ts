import path from "node:path";
import type { Plugin } from "vite";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig, type ViteUserConfig } from "vitest/config";
import { buildDocsAssets } from "./scripts/build-docs-assets.mjs";
import { fakeUpstream } from "./test/support/fake-upstream.ts";
import { OAUTH_TEST_VARS, VIDEO_TEST_VARS } from "./test/support/fake-upstream-config.ts";

/**
 * `PLUGIN_RPI_CAM=false npx vitest run` runs the suite with the camera plugin switched off, its own
 * tests left out: what a deployment without cameras serves must pass on its own.
 */
const cameraPluginOff = process.env.PLUGIN_RPI_CAM === "false";

/** Bindings the tests run with, on top of wrangler.toml's development values. */
export const TEST_VARS = {
  ...(cameraPluginOff ? { PLUGIN_RPI_CAM: "false" } : {}),
  // Cheap Argon2id so suites that create many accounts stay fast; production parameters are
  // the default and have a test of their own.
  ARGON2_MEMORY_KIB: "64",
  ARGON2_ITERATIONS: "1",
  BOOTSTRAP_SUPERUSER_EMAIL: "admin@relab.test",
  BOOTSTRAP_SUPERUSER_PASSWORD: "bootstrap-password-for-tests",
  AUTH_TOKEN_SECRET: "test-token-secret-0123456789abcdef0123456789abcdef",
  DATA_ENCRYPTION_KEY: "7d3f0c9a1b2e4d5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b",
  // Suites share one client IP ("unknown"): the request-rate limiters would hold them up. The
  // limiter tests switch them on per request (test/support/limits.ts); the per-account guards
  // stay on everywhere, as in production.
  RATE_LIMITS_ENABLED: "false",
  // Google and GitHub sign-in against the fake providers of test/support/fake-oauth-provider.ts.
  ...OAUTH_TEST_VARS,
  // Live streams go to the fake video platform of test/support/fake-video-platform.ts.
  ...VIDEO_TEST_VARS,
};

/** In Node, `.wasm` imports become compiled modules, as Wrangler and workerd make them. */
function wasmModules(): Plugin {
  return {
    name: "wasm-modules",
    load(id) {
      if (!id.endsWith(".wasm")) return null;
      return `import { readFileSync } from "node:fs";\nexport default new WebAssembly.Module(readFileSync(${JSON.stringify(id)}));`;
    },
  };
}

export default defineConfig(async (): Promise<ViteUserConfig> => {
  // wrangler.toml's [assets] directory must exist before the pool reads the configuration.
  buildDocsAssets(import.meta.dirname);
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
            exclude: ["test/node/**", ...(cameraPluginOff ? ["test/routes/plugins/rpi-cam/**", "test/durable-objects/camera-relay.test.ts"] : [])],
            // The camera cases of the hardening files go with them.
            ...(cameraPluginOff ? { testNamePattern: /^(?!.*(cameras and their commands|a camera command's body))/ } : {}),
            setupFiles: ["./test/setup/apply-migrations.ts"],
          },
        },
        {
          plugins: [wasmModules()],
          test: {
            name: "node",
            include: ["test/node/**/*.test.ts"],
            environment: "node",
            // Inlined so that its `.wasm` import goes through the plugin instead of Node's loader.
            server: { deps: { inline: [/@phi-ag\/argon2/] } },
          },
        },
      ],
    },
  };
});
