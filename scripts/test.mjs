// `npm test`: the static checks (the Worker's and the Node-side type checks, the layer rules of
// docs/architecture.md) and the test suite, side by side. The suite leaves much of a core idle
// (runtimes starting, tests waiting on timers and time-outs); the checks run at a lower priority
// in that room instead of a minute before the suite. Their output is held and printed when they
// end; a failed check stops the suite at once, and any failure fails the command.
//
//   npm test                      everything
//   npm test -- test/routes/auth  the checks, and the suite's files matching the filter
import { spawn } from "node:child_process";
import { setPriority } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => path.join(ROOT, "node_modules", ".bin", name);
const tsc = path.join(ROOT, "node_modules", "typescript-7", "bin", "tsc");

/** The projects of vitest.config.ts that `npm test` runs (the slow tier is `npm run test:slow`). */
const PROJECTS = ["node", "workers", "workers-datacite"];

// One checker thread each: the native compiler's default of four checkers resolves the shared types
// once per checker, about 31 s of CPU per program where one thread takes 16 s, and beside the
// suite every core is taken anyway.
const CHECKS = [
  { name: "typecheck (Worker)", command: process.execPath, args: [tsc, "--noEmit", "--singleThreaded"] },
  { name: "typecheck (Node)", command: process.execPath, args: [tsc, "--noEmit", "--singleThreaded", "-p", "tsconfig.node.json"] },
  { name: "check:layers", command: bin("depcruise"), args: ["src", "--config", ".dependency-cruiser.cjs"] },
];

const children = new Set();

function run(command, args, { quiet }) {
  const child = spawn(command, args, { cwd: ROOT, stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit" });
  children.add(child);
  let output = "";
  if (quiet) {
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
  }
  const done = new Promise((resolve) => {
    child.on("error", (error) => resolve({ code: 1, output: `${output}${error.message}\n` }));
    child.on("close", (code, signal) => {
      children.delete(child);
      resolve({ code: code ?? (signal ? 1 : 0), output });
    });
  });
  return { child, done };
}

function stopAll() {
  for (const child of children) child.kill("SIGTERM");
}
process.on("SIGINT", () => {
  stopAll();
  process.exit(130);
});

/** What the checks that passed report, printed after the suite's summary. */
const passed = [];

/** The checks one after another, each below the suite's priority; resolves with the first failure's report, or null. */
async function checks() {
  for (const check of CHECKS) {
    const started = Date.now();
    const { child, done } = run(check.command, check.args, { quiet: true });
    try {
      // Children it starts (the native compiler) inherit the priority.
      setPriority(child.pid, 10);
    } catch {
      // Not allowed here: it runs at the suite's priority.
    }
    const { code, output } = await done;
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (code !== 0) return `✗ ${check.name} failed (${seconds} s):\n${output}`;
    passed.push(`✓ ${check.name} (${seconds} s)`);
  }
  return null;
}

const suite = run(bin("vitest"), ["run", ...PROJECTS.flatMap((project) => ["--project", project]), ...process.argv.slice(2)], {
  quiet: false,
});
const failedCheck = await checks();
if (failedCheck) {
  suite.child.kill("SIGTERM");
  await suite.done;
  console.error(`\n${failedCheck}`);
  process.exit(1);
}
const { code } = await suite.done;
console.log(passed.join("\n"));
process.exit(code);
