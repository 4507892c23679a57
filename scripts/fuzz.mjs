// Runs the property-based fuzz test of the HTTP surface (test/fuzz/openapi-fuzz.test.ts) for
// longer than `npm test` does, or again with a seed a failure printed:
//
//   npm run fuzz -- [--runs N] [--seed S] [--only REGEX] [--path P] [--time-limit MS] [--summary]
//
// --runs: requests per operation (default 200). --seed: the run's seed (default: a random one,
// printed). --only: operations whose "METHOD /template" matches. --path: fast-check's replay path
// of a failure (printed with it). --time-limit: stop each operation after MS (default: none).
// --summary: print the statuses each operation answered. Runs in workerd against the same local
// bindings as the tests, one file, so only that file's storage is used.
import { spawnSync } from "node:child_process";
import { randomInt } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "200" },
    seed: { type: "string" },
    only: { type: "string" },
    path: { type: "string" },
    "time-limit": { type: "string", default: "0" },
    summary: { type: "boolean", default: false },
  },
});

function integer(name, text, min) {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min) {
    console.error(`--${name} must be an integer of at least ${min}, not ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return value;
}

const options = {
  runs: integer("runs", args.runs, 1),
  seed: args.seed === undefined ? randomInt(2 ** 31) : integer("seed", args.seed, -(2 ** 31)),
  timeLimitMs: integer("time-limit", args["time-limit"], 0),
  ...(args.only ? { only: args.only } : {}),
  ...(args.path ? { path: args.path } : {}),
  ...(args.summary ? { summary: true } : {}),
};
console.log(`fuzz: seed ${options.seed}, ${options.runs} runs per operation${options.only ? `, operations matching ${options.only}` : ""}`);

const vitest = path.join(ROOT, "node_modules", ".bin", "vitest");
const command = ["run", "--project", "workers", "test/fuzz/openapi-fuzz.test.ts"];
const result = spawnSync(vitest, command, { cwd: ROOT, stdio: "inherit", env: { ...process.env, FUZZ_OPTIONS: JSON.stringify(options) } });
process.exit(result.status ?? 1);
