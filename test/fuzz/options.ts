// Options of the fuzz test (openapi-fuzz.test.ts). `npm test` runs the defaults; `npm run fuzz`
// (scripts/fuzz.mjs) passes others as JSON in FUZZ_OPTIONS, which vitest.config.ts merges in and
// hands to the test. Imported by the config (Node) and the test (workerd): no imports here.

export interface FuzzOptions {
  /** Requests per operation. */
  runs: number;
  seed: number;
  /** Stop an operation's runs after this long (ms), 0 for no limit. */
  timeLimitMs: number;
  /** A regular expression over "METHOD /template": only these operations. */
  only?: string;
  /** fast-check's replay path of a failure (with `only` naming its one operation). */
  path?: string;
  /** Print the statuses each operation answered. */
  summary?: boolean;
}

declare module "vitest" {
  export interface ProvidedContext {
    fuzz: FuzzOptions;
  }
  export interface TaskMeta {
    /** Responses per status of one operation's runs (0: a request no client could send). */
    fuzzStatuses?: Record<number, number>;
  }
}

/**
 * `npm test`'s bounded pass: a fixed seed, so CI runs the same requests every time. The time limit
 * only caps an operation on a machine under load: one request of a step-up route (Argon2id) took
 * over 1.5 s there, and an operation interrupted before its first run fails.
 */
export const FUZZ_DEFAULTS: FuzzOptions = { runs: 2, seed: 20_260_521, timeLimitMs: 6_000 };

/**
 * The slow tier's pass (`npm run test:slow`, run by CI): the same seed and so the same first
 * requests, six times as many per operation (fast-check draws them in order: `npm test`'s
 * pass is its beginning).
 */
export const FUZZ_SLOW: FuzzOptions = { ...FUZZ_DEFAULTS, runs: 12 };

export function fuzzOptions(json: string | undefined): FuzzOptions {
  return { ...FUZZ_DEFAULTS, ...(json ? (JSON.parse(json) as Partial<FuzzOptions>) : {}) };
}

/** The command that runs the same requests again. */
export function replayCommand(options: FuzzOptions, only?: string, path?: string): string {
  const parts = [`npm run fuzz -- --seed ${options.seed} --runs ${options.runs}`];
  if (only ?? options.only) parts.push(`--only '${only ?? options.only}'`);
  if (path) parts.push(`--path ${path}`);
  return parts.join(" ");
}
