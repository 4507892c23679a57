// Runs the shell blocks of README.md and docs/*.md as a reader would: in order, in one shell, in a
// copy of the working tree (a fresh clone: no .dev.vars, no local state), against `npm start` of
// that copy on its own port. It fails on a command that exits non-zero, on an HTTP answer of 5xx,
// on a 4xx that the command's own comment does not announce (`curl ... # 404 when ...`), and on a
// dev log that shows an error.
//
//   npm run check:docs [-- --port 8793] [-- --keep]
//
// Every ```sh block runs, unless the line above it is `<!-- check:docs skip: <why> -->` (a block
// that starts the server, needs a second terminal, or talks to Cloudflare). `localhost:8787` in a
// command becomes the port of this run. docs/ pages take `$AT` (an access token) and `$ID` (a
// base product of that account, brand "Krups") as given: DOCS_SETUP below makes them for a fresh
// account, as the README's walk-through does. Needs curl and jq (the README says so too).
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DOCUMENTED_PORT = "8787";
const START_TIMEOUT_MS = 180_000;
const RUN_TIMEOUT_MS = 15 * 60_000;

const DOCS_SETUP = `
curl -s localhost:8787/v1/auth/register -H 'content-type: application/json' \\
  -d '{"email":"grace@example.org","username":"grace_h","password":"amber-lantern-52-quartz"}'
TOKEN=$(curl -s 'localhost:8787/__dev/outbox?to=grace@example.org' | jq -r '.items[0].text' | sed -n 's/.*#token=//p')
curl -s localhost:8787/v1/auth/verify -H 'content-type: application/json' -d "{\\"token\\":\\"$TOKEN\\"}"
AT=$(curl -s localhost:8787/v1/auth/bearer/login -d username=grace@example.org -d password=amber-lantern-52-quartz | jq -r .access_token)
ID=$(curl -s localhost:8787/v1/products -H "Authorization: Bearer $AT" -H 'content-type: application/json' \\
  -d '{"name":"Coffee grinder","brand":"Krups","weight_g":180,"components":[{"name":"Motor","amount_in_parent":1}]}' | jq -r .id)
`;

const { values: args } = parseArgs({ options: { port: { type: "string" }, keep: { type: "boolean" } } });

/** The ```sh blocks of one Markdown file, with where they start and why one is skipped. */
export function shellBlocks(file, text) {
  const lines = text.split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```(sh|bash|shell)\s*$/.exec(lines[i]);
    if (!fence) continue;
    const indent = fence[1].length;
    let above = i - 1;
    while (above >= 0 && lines[above].trim() === "") above--;
    const skip = /^\s*<!-- check:docs skip: (.+) -->$/.exec(lines[above] ?? "")?.[1] ?? null;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end])) end++;
    blocks.push({ file, line: start + 1, skip, lines: lines.slice(start, end).map((line) => line.slice(indent)) });
    i = end;
  }
  return blocks;
}

/** Commands of a block: continued lines joined; comment-only and blank lines dropped. */
export function commands(block) {
  const out = [];
  let current = null;
  block.lines.forEach((text, index) => {
    if (current === null) {
      if (text.trim() === "" || text.trim().startsWith("#")) return;
      current = { line: block.line + index, text: [] };
    }
    current.text.push(text);
    if (!text.endsWith("\\")) {
      out.push(current);
      current = null;
    }
  });
  if (current) out.push(current);
  return out.map(({ line, text }) => {
    const last = text.at(-1);
    const comment = /\s#\s(.*)$/.exec(last)?.[1] ?? "";
    const allowed = [...comment.matchAll(/\b(4\d\d)\b/g)].map((match) => match[1]);
    return { where: `${block.file}:${line}`, text: text.join("\n"), allowed };
  });
}

const quote = (value) => `'${value.replaceAll("'", "'\\''")}'`;

const PREAMBLE = `
set -e
__statuses=$(mktemp)
__where=start
trap 'echo "✘ $__where: the command exited $?"' ERR
# Every curl records the final HTTP status of its answer (the last status line of its headers).
curl() {
  local headers rc=0
  headers=$(mktemp)
  command curl --max-time 60 -D "$headers" "$@" || rc=$?
  awk '/^HTTP\\//{ s = $2 } END { if (s) print s }' "$headers" >> "$__statuses"
  rm -f "$headers"
  return $rc
}
__cmd() { __where=$1; printf '\\n\\033[2m%s\\033[0m\\n$ %s\\n' "$1" "$2"; }
__check() {
  local s bad=0
  while read -r s; do
    case $s in
      2??|3??) ;;
      4??) case " $2 " in *" $s "*) ;; *) echo; echo "✘ $1: HTTP $s, which the command's comment does not announce"; bad=1 ;; esac ;;
      *) echo; echo "✘ $1: HTTP $s"; bad=1 ;;
    esac
  done < "$__statuses"
  : > "$__statuses"
  [ $bad = 0 ] || exit 1
  printf '\n::ok\n'
}
`;

function script(blocks, port) {
  const parts = [PREAMBLE];
  for (const block of blocks) {
    parts.push(`\n# ${block.file}:${block.line}`);
    const setup = block.setup ? commands({ file: "check:docs setup", line: 1, lines: block.setup.trim().split("\n") }) : [];
    for (const command of [...setup, ...commands(block)]) {
      const text = command.text.replaceAll(`localhost:${DOCUMENTED_PORT}`, `localhost:${port}`);
      parts.push(
        `__cmd ${quote(command.where)} ${quote(command.text)}`,
        text,
        `__check ${quote(command.where)} ${quote(command.allowed.join(" "))}`,
      );
    }
  }
  return `${parts.join("\n")}\n`;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A copy of the working tree as git sees it (tracked and new files, nothing ignored), sharing node_modules. */
function freshCopy() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "relab-check-docs-"));
  const listed = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of listed.stdout.split("\0").filter(Boolean)) {
    if (!existsSync(path.join(ROOT, file))) continue;
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    cpSync(path.join(ROOT, file), path.join(dir, file));
  }
  symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
  return dir;
}

/** Runs the generated script, echoing its output without the `::ok` markers it counts. */
function runCommands(dir) {
  return new Promise((resolve) => {
    const bash = spawn("bash", [".check-docs.sh"], { cwd: dir, stdio: ["ignore", "pipe", "inherit"] });
    const timer = setTimeout(() => bash.kill("SIGTERM"), RUN_TIMEOUT_MS);
    let passed = 0;
    let partial = "";
    bash.stdout.setEncoding("utf8");
    bash.stdout.on("data", (chunk) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        if (line === "::ok") passed += 1;
        else process.stdout.write(`${line}\n`);
      }
    });
    bash.on("close", (status, signal) => {
      clearTimeout(timer);
      if (partial) process.stdout.write(`${partial}\n`);
      if (signal) console.log(`✘ the commands were stopped after ${RUN_TIMEOUT_MS / 60_000} minutes`);
      resolve({ status: status ?? 1, passed });
    });
  });
}

async function waitForLive(base, server) {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`npm start exited (${server.exitCode}) before it served`);
    const ok = await fetch(`${base}/live`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`npm start did not serve ${base}/live within ${START_TIMEOUT_MS / 1000} s`);
}

async function main() {
  const files = [
    "README.md",
    ...readdirSync(path.join(ROOT, "docs"))
      .filter((name) => name.endsWith(".md"))
      .sort()
      .map((name) => `docs/${name}`),
  ];
  const blocks = files.flatMap((file) => shellBlocks(file, readFileSync(path.join(ROOT, file), "utf8")));
  const runnable = blocks.filter((block) => block.skip === null);
  const firstDocs = runnable.find((block) => block.file.startsWith("docs/"));
  if (firstDocs) firstDocs.setup = DOCS_SETUP;

  for (const tool of ["curl", "jq"]) {
    if (spawnSync(tool, ["--version"], { stdio: "ignore" }).status !== 0)
      throw new Error(`${tool} is needed (Debian: apt-get install -y ${tool})`);
  }
  const port = args.port ?? String(await freePort());
  const inspectorPort = String(await freePort());
  const dir = freshCopy();
  const serverLog = [];
  const server = spawn(
    "npm",
    ["start", "--", "--port", port, "--ip", "127.0.0.1", "--inspector-port", inspectorPort, "--show-interactive-dev-session=false"],
    {
      cwd: dir,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, CI: "1", FORCE_COLOR: "0" },
    },
  );
  for (const stream of [server.stdout, server.stderr]) stream.on("data", (chunk) => serverLog.push(chunk.toString()));
  const stopServer = () => {
    if (server.exitCode === null) {
      try {
        process.kill(-server.pid, "SIGTERM");
      } catch {}
    }
  };
  process.on("exit", stopServer);
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

  let passed = 0;
  let failed = 0;
  let logErrors = 0;
  try {
    const started = Date.now();
    await waitForLive(`http://127.0.0.1:${port}`, server);
    console.log(`npm start served a fresh copy (${dir}) on port ${port} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    writeFileSync(path.join(dir, ".check-docs.sh"), script(runnable, port));
    // Asynchronous, so that the server's output keeps being read while the commands run.
    const run = await runCommands(dir);
    passed = run.passed;
    if (run.status !== 0) failed = 1;

    const errors = serverLog
      .join("")
      .split("\n")
      .filter((line) => /\[ERROR\]|✘/.test(line));
    if (errors.length > 0) {
      console.log(`\n✘ the dev log shows ${errors.length} error line(s):\n${errors.slice(0, 10).join("\n")}`);
      logErrors = errors.length;
    }
  } finally {
    stopServer();
    if (failed + logErrors > 0) console.log(`\nLast lines of the dev log:\n${serverLog.join("").split("\n").slice(-40).join("\n")}`);
    if (!args.keep) rmSync(dir, { recursive: true, force: true });
  }

  const total =
    runnable.flatMap(commands).length + (firstDocs ? commands({ file: "", line: 1, lines: DOCS_SETUP.trim().split("\n") }).length : 0);
  console.log(`\nRan ${passed} of ${total} commands from ${runnable.length} blocks; ${blocks.length - runnable.length} blocks skipped:`);
  for (const block of blocks.filter((b) => b.skip !== null)) console.log(`  ${block.file}:${block.line}: ${block.skip}`);
  if (passed + failed < total) console.log(`${total - passed - failed} commands after the failure did not run.`);
  if (logErrors > 0) console.log(`The dev log showed ${logErrors} error line(s) (above).`);
  console.log(`check:docs: ${passed} passed, ${failed + (logErrors > 0 ? 1 : 0)} failed`);
  process.exitCode = failed + logErrors > 0 ? 1 : 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`check:docs: ${error.message}`);
    process.exit(1);
  });
}
