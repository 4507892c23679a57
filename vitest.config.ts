import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import type { Plugin } from "vite";
import { defineConfig, type ViteUserConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import type { Reporter } from "vitest/reporters";
import { buildDocsAssets } from "./scripts/build-docs-assets.mjs";
import { FUZZ_SLOW, fuzzOptions, replayCommand } from "./test/fuzz/options.ts";
import { fakeUpstream } from "./test/support/fake-upstream.ts";
import { DATACITE_TEST_VARS, OAUTH_TEST_VARS, VIDEO_TEST_VARS } from "./test/support/fake-upstream-config.ts";

// Wrangler reads a developer's .dev.vars for every test runtime and says so each time ("Using
// secrets defined in .dev.vars"); the values that matter to the tests are TEST_VARS, which win.
// Its warnings and errors still show.
process.env.WRANGLER_LOG ??= "warn";

/**
 * `PLUGIN_RPI_CAM=false npx vitest run` runs the suite with the camera plugin switched off, its own
 * tests left out: what a deployment without cameras serves must pass on its own.
 */
const cameraPluginOff = process.env.PLUGIN_RPI_CAM === "false";
const CAMERA_TESTS_WHEN_OFF = cameraPluginOff ? ["test/routes/plugins/rpi-cam/**", "test/durable-objects/camera-relay.test.ts"] : [];
// The camera cases of the hardening files go with them.
const CAMERA_CASES_WHEN_OFF = cameraPluginOff ? { testNamePattern: /^(?!.*(cameras and their commands|a camera command's body))/ } : {};

/** Bindings the tests run with, on top of wrangler.jsonc's development values. */
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
  // Deletions of more than 50 records run as deletion jobs in slices of 50 (production: 2,000),
  // so that the tests of slicing and resumption need only small trees.
  DELETION_SLICE_RECORDS: "50",
  // Google and GitHub sign-in against the fake providers of test/support/fake-oauth-provider.ts.
  ...OAUTH_TEST_VARS,
  // Live streams go to the fake video platform of test/support/fake-video-platform.ts.
  ...VIDEO_TEST_VARS,
};

/** In Node, `.wasm` imports become compiled modules, as Wrangler and workerd make them. */
function wasmModules(): Plugin {
  return {
    name: "wasm-modules",
    enforce: "pre",
    load(id) {
      if (!id.endsWith(".wasm")) return null;
      return `import { readFileSync } from "node:fs";\nexport default new WebAssembly.Module(readFileSync(${JSON.stringify(id)}));`;
    },
  };
}

/** Files of the slow tier: bursts of hundreds of requests and real waits of seconds (`npm run test:slow`). */
const SLOW = "test/**/*.slow.test.ts";

/**
 * Files that run with DOI registration switched on against the fake DataCite (its variables are
 * the runtime's, which the release queue's consumer reads): a project of their own, so every
 * other release built by the tests stays without DOIs and never meets the fake's shared DOIs.
 */
const DATACITE = "test/**/*.datacite.test.ts";

/** The fuzz test's options (test/fuzz/options.ts): its defaults, or what `npm run fuzz` passes in FUZZ_OPTIONS. */
const fuzz = fuzzOptions(process.env.FUZZ_OPTIONS);
const FUZZ_FILE = "test/fuzz/openapi-fuzz.test.ts";

/**
 * Prints after every run of the fuzz test, passed or failed, its seed, how many requests it sent
 * and the command that repeats it (and, with `summary`, the statuses each operation answered).
 */
const fuzzSeedReporter: Reporter = {
  onTestModuleEnd(module) {
    if (!module.moduleId.endsWith(FUZZ_FILE)) return;
    const options = module.project.name === "slow" ? FUZZ_SLOW : fuzz;
    const lines: string[] = [];
    const total: Record<string, number> = {};
    for (const test of module.children.allTests()) {
      const statuses = test.meta().fuzzStatuses;
      if (!statuses) continue;
      for (const [status, n] of Object.entries(statuses)) {
        const group = status === "0" ? "not sendable" : `${status[0]}xx`;
        total[group] = (total[group] ?? 0) + n;
      }
      if (options.summary)
        lines.push(
          `  ${test.name}: ${Object.entries(statuses)
            .map(([status, n]) => `${status}×${n}`)
            .join(" ")}`,
        );
    }
    const requests = Object.values(total).reduce((sum, n) => sum + n, 0);
    const byClass = Object.entries(total)
      .sort()
      .map(([status, n]) => `${n} ${status}`)
      .join(", ");
    const seconds = (module.diagnostic().duration / 1000).toFixed(1);
    console.log(
      `fuzz: seed ${options.seed}, ${requests} requests (${byClass}) in ${seconds} s; again: ${replayCommand(options)}${lines.length ? `\n${lines.join("\n")}` : ""}`,
    );
  },
};

/**
 * The order files start in. Vitest runs projects one after another by name, so the DataCite
 * project's one file (a runtime of its own, 20 s to start) came last and ran alone at the end,
 * and the node project's files came first while no runtime was up. This starts that runtime and
 * the longest file first, the workers files next (vitest's order: longest first when it knows
 * durations, largest first on a fresh clone), and the quick node files last, where they fill the
 * room the last workers files leave.
 */
class StartOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) =>
      file.project.name === "workers-datacite" ? 0 : file.moduleId.endsWith(FUZZ_FILE) ? 1 : file.project.name.startsWith("node") ? 3 : 2;
    const sorted = await super.sort(files);
    return sorted
      .map((file, index) => ({ file, index }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.index - b.index)
      .map(({ file }) => file);
  }
}

/**
 * Time-outs of the workerd projects (a project does not inherit the root's). With four files on
 * two cores a CPU-bound test runs at about half its speed: a 2.7 s image decode passed 5 s on a
 * quiet machine, and the longest test of a suite run takes about half of the 15 s. The limits catch hangs; they do not time tests (cost is asserted as
 * round trips and rows read).
 */
const WORKERD_TIMEOUTS = { testTimeout: 15_000, hookTimeout: 30_000 };

const SHARED_RUNTIME_SETUP = ["./test/setup/fresh-storage.ts", "./test/setup/bootstrap-superuser.ts", "./test/setup/typed-arrays.ts"];

export default defineConfig(async (): Promise<ViteUserConfig> => {
  // wrangler.jsonc's "assets" directory must exist before the pool reads the configuration.
  buildDocsAssets(import.meta.dirname);
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  const workerd = (vars: Record<string, string> = {}) =>
    cloudflareTest({
      main: "./src/index.ts",
      wrangler: { configPath: "./wrangler.jsonc" },
      miniflare: {
        bindings: { ...TEST_VARS, ...vars, TEST_MIGRATIONS: migrations },
        // Empty databases beside DB: the restore drill loads backups into them (test/services/backup.test.ts).
        d1Databases: { RESTORE_DB: "restore-drill", RESTORE_DB_2: "restore-drill-2" },
        outboundService: fakeUpstream,
        // The media queues wait up to 5 s to fill a batch in production; the tests that follow an
        // upload through the real consumer would wait that long for every message. Everything
        // else of the consumer stays as wrangler.jsonc says.
        queueConsumers: {
          "relab-media": { maxBatchSize: 10, maxBatchTimeout: 1, maxRetries: 3, deadLetterQueue: "relab-media-dlq" },
          "relab-media-dlq": { maxBatchSize: 10, maxBatchTimeout: 1, maxRetries: 3 },
        },
      },
    });
  return {
    test: {
      // The Worker logs one JSON line per request; show them only for tests that fail.
      silent: "passed-only",
      reporters: ["default", fuzzSeedReporter],
      sequence: { sequencer: StartOrder },
      // Four files at a time on two cores: the workerd runtimes spend much of a run waiting
      // (timers, time-outs, queue deliveries, each other's I/O), and files in flight fill that
      // room. Measured on a 2-core machine: npm test 335 s with two, 286 s with three (2026-11-21);
      // the suite alone 294 s with three, 250 s with four, 258 s with five, using less CPU with
      // four than with three (2026-11-29).
      maxWorkers: 4,
      projects: [
        {
          // HTTP and binding tests, in workerd. Files share one runtime per worker (starting
          // workerd and loading the app per file cost most of the suite's time); the setup file
          // wipes every binding's storage before each file instead.
          plugins: [workerd()],
          test: {
            name: "workers",
            include: ["test/**/*.test.ts"],
            exclude: ["test/node/**", SLOW, DATACITE, ...CAMERA_TESTS_WHEN_OFF],
            ...CAMERA_CASES_WHEN_OFF,
            setupFiles: SHARED_RUNTIME_SETUP,
            isolate: false,
            ...WORKERD_TIMEOUTS,
            provide: { fuzz },
          },
        },
        {
          plugins: [workerd(DATACITE_TEST_VARS)],
          test: {
            name: "workers-datacite",
            include: [DATACITE],
            exclude: [SLOW],
            setupFiles: SHARED_RUNTIME_SETUP,
            isolate: false,
            ...WORKERD_TIMEOUTS,
          },
        },
        {
          // Bursts and waits: run by `npm run test:slow` (and CI), not by `npm test`.
          plugins: [workerd()],
          test: {
            name: "slow",
            // With the fuzz test's longer pass; npm test runs its beginning.
            include: [SLOW, FUZZ_FILE],
            exclude: ["test/node/**", DATACITE, ...CAMERA_TESTS_WHEN_OFF],
            setupFiles: SHARED_RUNTIME_SETUP,
            isolate: false,
            ...WORKERD_TIMEOUTS,
            provide: { fuzz: FUZZ_SLOW },
          },
        },
        {
          // Node-side tools that run wrangler (setup:production against a fake Cloudflare API):
          // seconds each, so run by `npm run test:slow` (and CI), not by `npm test`.
          test: {
            name: "node-slow",
            include: ["test/node/**/*.slow.test.ts"],
            environment: "node",
            setupFiles: ["./test/setup/typed-arrays.ts"],
            testTimeout: 300_000,
          },
        },
        {
          // Pure code (codecs, parsers, crypto, policies) and Node-side tools: no workerd.
          plugins: [wasmModules()],
          test: {
            name: "node",
            include: ["test/node/**/*.test.ts"],
            exclude: [SLOW],
            environment: "node",
            setupFiles: ["./test/setup/typed-arrays.ts"],
            // Files of one process share its modules instead of loading them again for each file: these
            // files hold no state in modules (each makes its own databases, buckets and sinks). Measured
            // on 2 cores: the project took 100 s of CPU isolated, 67 s shared (2026-11-29).
            isolate: false,
            // The release writers' tests (72,000 rows through CSV and Parquet, checkpoints, every
            // instant's date text) take seconds each, more beside the workerd files: the limit
            // catches a hang, it does not time them.
            testTimeout: 20_000,
            // Inlined so that its `.wasm` import goes through the plugin instead of Node's loader.
            server: { deps: { inline: [/@phi-ag\/argon2/] } },
          },
        },
      ],
    },
  };
});
