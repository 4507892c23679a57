// Opens the docs page in headless Chromium, as a person on a network without internet would, and
// checks that it works: every operation of the schema is rendered, every request the page makes
// goes to the API's own origin, and the page hits no CSP violation and no script error. It starts
// its own `wrangler dev` (the same as `npm start`) on free ports with throwaway state, so it needs
// only Chromium (Debian: `apt-get install -y chromium`; or set CHROMIUM to a binary).
//
//   npm run test:browser [-- --screenshot docs.png] [-- --base http://localhost:8787]
//
// --base: check an API that is already running instead of starting one.
// --screenshot: also save what the browser shows, for a person to look at.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import WebSocket from "ws";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const HOST = "127.0.0.1";
const RENDER_TIMEOUT_MS = 30_000;

const { values: args } = parseArgs({
  options: { base: { type: "string" }, screenshot: { type: "string" } },
});

const cleanups = [];
async function cleanUp() {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  cleanups.length = 0;
}
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => cleanUp().finally(() => process.exit(130)));
}

function findChromium() {
  const candidates = [process.env.CHROMIUM, "chromium", "chromium-browser", "google-chrome"].filter(Boolean);
  for (const candidate of candidates) {
    if (spawnSync(candidate, ["--version"], { stdio: "ignore" }).status === 0) return candidate;
  }
  throw new Error("no Chromium found: install Debian's (apt-get install -y chromium) or set CHROMIUM=/path/to/chrome");
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts a child in its own process group and registers its end; `onLine` sees each output line. */
function startChild(command, argv, options, onLine) {
  const child = spawn(command, argv, { ...options, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const lines = [];
  for (const stream of [child.stdout, child.stderr]) {
    let partial = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk) => {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        if (lines.length > 60) lines.shift();
        onLine?.(line);
      }
    });
  }
  const exited = new Promise((resolve) => child.on("exit", resolve));
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    process.kill(-child.pid, "SIGTERM");
    const timer = setTimeout(() => child.exitCode === null && process.kill(-child.pid, "SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  });
  return { child, lines, exited };
}

/** `wrangler dev` on free ports, with fresh local state (migrated) and throwaway secrets. */
async function startApi() {
  const state = mkdtempSync(path.join(os.tmpdir(), "relab-docs-browser-"));
  cleanups.push(async () => rmSync(state, { recursive: true, force: true }));
  const envFile = path.join(state, "secrets.env");
  writeFileSync(
    envFile,
    [
      `AUTH_TOKEN_SECRET=${randomBytes(32).toString("hex")}`,
      `DATA_ENCRYPTION_KEY=${randomBytes(32).toString("hex")}`,
      "BOOTSTRAP_SUPERUSER_EMAIL=admin@relab.localhost",
      `BOOTSTRAP_SUPERUSER_PASSWORD=${randomBytes(16).toString("hex")}`,
      "",
    ].join("\n"),
  );
  const wrangler = path.join(ROOT, "node_modules/.bin/wrangler");
  const env = { ...process.env, CI: "1", CLOUDFLARE_CF_FETCH_ENABLED: "false", NO_COLOR: "1" };
  const migrate = spawnSync(wrangler, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state], {
    cwd: ROOT,
    env,
    encoding: "utf8",
  });
  if (migrate.status !== 0) throw new Error(`migrations failed:\n${migrate.stdout}\n${migrate.stderr}`);

  const [port, inspectorPort] = [await freePort(), await freePort()];
  const argv = ["dev", "--ip", HOST, "--port", String(port), "--inspector-port", String(inspectorPort)];
  argv.push("--persist-to", state, "--env-file", envFile, "--show-interactive-dev-session=false", "--log-level", "warn");
  const dev = startChild(wrangler, argv, { cwd: ROOT, env });
  const base = `http://${HOST}:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (dev.child.exitCode !== null) throw new Error(`wrangler dev exited:\n${dev.lines.join("\n")}`);
    try {
      if ((await fetch(`${base}/live`)).ok) return base;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`wrangler dev did not answer within 120 s:\n${dev.lines.join("\n")}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Headless Chromium with its DevTools endpoint on a free port; returns the browser's WebSocket URL. */
async function startChromium(binary) {
  const profile = mkdtempSync(path.join(os.tmpdir(), "relab-docs-chromium-"));
  cleanups.push(async () => rmSync(profile, { recursive: true, force: true }));
  let resolveUrl;
  const url = new Promise((resolve) => (resolveUrl = resolve));
  const flags = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--no-first-run",
    "--window-size=1280,2000",
    `--user-data-dir=${profile}`,
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
    "about:blank",
  ];
  const browser = startChild(binary, flags, {}, (line) => {
    const match = /DevTools listening on (ws:\/\/\S+)/.exec(line);
    if (match) resolveUrl(match[1]);
  });
  const timeout = new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`Chromium did not start:\n${browser.lines.join("\n")}`)), 30_000).unref(),
  );
  return Promise.race([
    url,
    timeout,
    browser.exited.then(() => Promise.reject(new Error(`Chromium exited:\n${browser.lines.join("\n")}`))),
  ]);
}

/** A minimal Chrome DevTools Protocol client over one WebSocket (flat sessions). */
async function connect(wsUrl) {
  const socket = new WebSocket(wsUrl, { perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  cleanups.push(async () => socket.close());
  let nextId = 1;
  const pending = new Map();
  const listeners = [];
  socket.on("message", (data) => {
    const message = JSON.parse(data.toString());
    if (message.id !== undefined) {
      const call = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) call?.reject(new Error(`${call.method}: ${message.error.message}`));
      else call?.resolve(message.result);
    } else {
      for (const listener of listeners) listener(message);
    }
  });
  return {
    send(method, params = {}, sessionId) {
      const id = nextId++;
      socket.send(JSON.stringify({ id, method, params, sessionId }));
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject, method }));
    },
    on(listener) {
      listeners.push(listener);
    },
  };
}

/** The summary of every operation in the schema, as Swagger UI shows it. */
async function schemaSummaries(base) {
  const response = await fetch(`${base}/v1/openapi.json`);
  if (!response.ok) throw new Error(`GET /v1/openapi.json answered ${response.status}`);
  const document = await response.json();
  return Object.values(document.paths).flatMap((item) =>
    Object.values(item).flatMap((operation) => (operation.summary ? [operation.summary] : [])),
  );
}

async function main() {
  const started = Date.now();
  const chromium = findChromium();
  const base = args.base?.replace(/\/$/, "") ?? (await startApi());
  const apiReady = Date.now();
  const expected = await schemaSummaries(base);

  const cdp = await connect(await startChromium(chromium));
  const { targetId } = await cdp.send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
  const send = (method, params) => cdp.send(method, params, sessionId);

  const requests = [];
  const problems = [];
  cdp.on((message) => {
    if (message.sessionId !== sessionId) return;
    if (message.method === "Network.requestWillBeSent") requests.push(message.params.request.url);
    if (message.method === "Network.loadingFailed" && !message.params.canceled) {
      problems.push(`request failed: ${message.params.errorText} (${message.params.blockedReason ?? "not blocked"})`);
    }
    if (message.method === "Runtime.exceptionThrown") {
      problems.push(`script error: ${message.params.exceptionDetails.exception?.description ?? message.params.exceptionDetails.text}`);
    }
    if (message.method === "Runtime.consoleAPICalled" && ["error", "assert"].includes(message.params.type)) {
      const text = message.params.args.map((arg) => arg.value ?? arg.description ?? "").join(" ");
      problems.push(`console.${message.params.type}: ${text.slice(0, 500)}`);
    }
    if (message.method === "Log.entryAdded" && message.params.entry.level === "error") {
      problems.push(`console (${message.params.entry.source}): ${message.params.entry.text} ${message.params.entry.url ?? ""}`);
    }
  });
  await send("Network.enable");
  await send("Runtime.enable");
  await send("Log.enable");
  await send("Page.enable");
  // Counts violations of the page's CSP as the page itself sees them (this script is injected by
  // the browser, not loaded by the page, so the CSP does not apply to it).
  await send("Page.addScriptToEvaluateOnNewDocument", {
    source: `window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => window.__cspViolations.push(e.violatedDirective + " " + e.blockedURI));`,
  });
  const docsUrl = `${base}/v1/docs`;
  await send("Page.bringToFront");
  await send("Page.navigate", { url: docsUrl });

  // Swagger UI renders once it has fetched the schema, and only the operations near the visible
  // part of the page: scroll through it, collecting every operation shown, until all were seen.
  const deadline = Date.now() + RENDER_TIMEOUT_MS;
  const seen = new Set();
  let page = { summaries: [], title: null, csp: [] };
  let firstShot = null;
  for (;;) {
    const { result } = await send("Runtime.evaluate", {
      returnByValue: true,
      expression: `(() => {
        const summaries = [...document.querySelectorAll(".opblock-summary-description")].map((e) => e.textContent.trim());
        const bottom = window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2;
        window.scrollTo(0, bottom ? 0 : window.scrollY + window.innerHeight * 0.8);
        return { summaries, title: document.querySelector(".info .title")?.textContent ?? null, csp: window.__cspViolations ?? [] };
      })()`,
    });
    if (result.value) {
      page = result.value;
      for (const summary of page.summaries) seen.add(summary);
    }
    if (args.screenshot && !firstShot && page.summaries.length > 0) {
      // What a person sees first: the top of the page, once operations are on it.
      await send("Runtime.evaluate", { expression: "window.scrollTo(0, 0)" });
      await new Promise((resolve) => setTimeout(resolve, 300));
      firstShot = (await send("Page.captureScreenshot", { format: "png" })).data;
    }
    if (expected.every((summary) => seen.has(summary)) || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const rendered = Date.now();
  if (args.screenshot && firstShot) writeFileSync(args.screenshot, Buffer.from(firstShot, "base64"));

  const origin = new URL(base).origin;
  const foreign = requests.filter((url) => !url.startsWith("data:") && new URL(url).origin !== origin);
  const missing = expected.filter((summary) => !seen.has(summary));
  const checks = [
    [
      `the schema's ${expected.length} operations are rendered`,
      expected.length > 0 && missing.length === 0,
      `missing: ${missing.slice(0, 10).join(" | ")} (${seen.size} seen)`,
    ],
    ["the API's title is shown", typeof page.title === "string" && page.title.includes("relab"), `title: ${page.title}`],
    [`all ${requests.length} requests go to ${origin}`, foreign.length === 0, `other origins: ${foreign.join(", ")}`],
    ["no CSP violation", page.csp.length === 0, page.csp.join("; ")],
    ["no script error or failed request", problems.length === 0, problems.join("\n  ")],
  ];
  let failed = 0;
  for (const [name, ok, detail] of checks) {
    console.log(`${ok ? "ok  " : "FAIL"} ${name}${ok ? "" : `\n  ${detail}`}`);
    if (!ok) failed++;
  }
  console.log(
    `${docsUrl}: API ready in ${((apiReady - started) / 1000).toFixed(1)} s, page rendered in ${((rendered - apiReady) / 1000).toFixed(1)} s; total ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  console.log(`docs-browser: ${checks.length - failed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  console.error(`docs browser check could not run: ${error?.stack ?? error}`);
} finally {
  await cleanUp();
}
process.exit(code);
