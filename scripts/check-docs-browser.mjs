// Opens the docs page and a release's landing page in headless Chromium, as a person on a network
// without internet would, and checks that they work. The docs page: every operation of the schema
// is rendered. The landing page (of a release the script builds through the API: a superuser with
// TOTP, a product, a release whose title holds markup and `</script>`): the title and citation
// show as text, the JSON-LD parses with the schema.org Dataset properties, the files are listed,
// the copy button works. Both: every request goes to the API's own origin, no CSP violation, no
// script error. It starts its own `wrangler dev` (the same as `npm start`) on free ports with
// throwaway state, so it needs only Chromium (Debian: `apt-get install -y chromium`; or set
// CHROMIUM to a binary).
//
//   npm run test:browser [-- --screenshot docs.png] [-- --base http://localhost:8787]
//
// --base: check an API that is already running instead of starting one (its latest release's
//   landing page, when it has one).
// --screenshot: also save what the browser shows, for a person to look at (the landing page next
//   to it, as <name>-landing.png).
// --port, --inspector-port, --devtools-port: fixed ports instead of free ones.
import { spawn, spawnSync } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
  options: {
    base: { type: "string" },
    screenshot: { type: "string" },
    port: { type: "string" },
    "inspector-port": { type: "string" },
    "devtools-port": { type: "string" },
  },
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
  const admin = { email: "admin@relab.localhost", password: randomBytes(16).toString("hex") };
  writeFileSync(
    envFile,
    [
      `AUTH_TOKEN_SECRET=${randomBytes(32).toString("hex")}`,
      `DATA_ENCRYPTION_KEY=${randomBytes(32).toString("hex")}`,
      `BOOTSTRAP_SUPERUSER_EMAIL=${admin.email}`,
      `BOOTSTRAP_SUPERUSER_PASSWORD=${admin.password}`,
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

  const port = args.port ? Number(args.port) : await freePort();
  const inspectorPort = args["inspector-port"] ? Number(args["inspector-port"]) : await freePort();
  const argv = ["dev", "--ip", HOST, "--port", String(port), "--inspector-port", String(inspectorPort)];
  argv.push("--persist-to", state, "--env-file", envFile, "--show-interactive-dev-session=false", "--log-level", "warn");
  const dev = startChild(wrangler, argv, { cwd: ROOT, env });
  const base = `http://${HOST}:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (dev.child.exitCode !== null) throw new Error(`wrangler dev exited:\n${dev.lines.join("\n")}`);
    try {
      if ((await fetch(`${base}/live`)).ok) return { base, admin };
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
    `--remote-debugging-port=${args["devtools-port"] ?? 0}`,
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

/**
 * A new tab with its own listeners: every request it makes, its script errors and failed loads,
 * and (seen by the page itself, through a script the browser injects, to which the page's CSP
 * does not apply) its CSP violations.
 */
async function openTab(cdp) {
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
  await send("Page.addScriptToEvaluateOnNewDocument", {
    source: `window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => window.__cspViolations.push(e.violatedDirective + " " + e.blockedURI));`,
  });
  const evaluate = async (expression) =>
    (await send("Runtime.evaluate", { returnByValue: true, awaitPromise: true, expression })).result.value;
  return { send, evaluate, requests, problems };
}

/** The checks every page gets: its requests stay on the API's origin, no CSP violation, no script error. */
function commonChecks(tab, origin, csp) {
  const foreign = tab.requests.filter((url) => !url.startsWith("data:") && new URL(url).origin !== origin);
  return [
    [`all ${tab.requests.length} requests go to ${origin}`, foreign.length === 0, `other origins: ${foreign.join(", ")}`],
    ["no CSP violation", csp.length === 0, csp.join("; ")],
    ["no script error or failed request", tab.problems.length === 0, tab.problems.join("\n  ")],
  ];
}

async function checkDocsPage(cdp, base) {
  const expected = await schemaSummaries(base);
  const tab = await openTab(cdp);
  const docsUrl = `${base}/v1/docs`;
  await tab.send("Page.bringToFront");
  await tab.send("Page.navigate", { url: docsUrl });

  // Swagger UI renders once it has fetched the schema, and only the operations near the visible
  // part of the page: scroll through it, collecting every operation shown, until all were seen.
  const deadline = Date.now() + RENDER_TIMEOUT_MS;
  const seen = new Set();
  let page = { summaries: [], title: null, csp: [] };
  let firstShot = null;
  for (;;) {
    const value = await tab.evaluate(`(() => {
        const summaries = [...document.querySelectorAll(".opblock-summary-description")].map((e) => e.textContent.trim());
        const bottom = window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2;
        window.scrollTo(0, bottom ? 0 : window.scrollY + window.innerHeight * 0.8);
        return { summaries, title: document.querySelector(".info .title")?.textContent ?? null, csp: window.__cspViolations ?? [] };
      })()`);
    if (value) {
      page = value;
      for (const summary of page.summaries) seen.add(summary);
    }
    if (args.screenshot && !firstShot && page.summaries.length > 0) {
      // What a person sees first: the top of the page, once operations are on it.
      await tab.send("Runtime.evaluate", { expression: "window.scrollTo(0, 0)" });
      await new Promise((resolve) => setTimeout(resolve, 300));
      firstShot = (await tab.send("Page.captureScreenshot", { format: "png" })).data;
    }
    if (expected.every((summary) => seen.has(summary)) || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (args.screenshot && firstShot) writeFileSync(args.screenshot, Buffer.from(firstShot, "base64"));
  const missing = expected.filter((summary) => !seen.has(summary));
  return {
    url: docsUrl,
    checks: [
      [
        `docs: the schema's ${expected.length} operations are rendered`,
        expected.length > 0 && missing.length === 0,
        `missing: ${missing.slice(0, 10).join(" | ")} (${seen.size} seen)`,
      ],
      ["docs: the API's title is shown", typeof page.title === "string" && page.title.includes("relab"), `title: ${page.title}`],
      ...commonChecks(tab, new URL(base).origin, page.csp).map(([name, ok, detail]) => [`docs: ${name}`, ok, detail]),
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// A release to look at: the bootstrap superuser enrols TOTP (the admin routes need it), accepts
// the contributor terms, records a product, and asks for a release whose title holds markup.

/** A title that breaks any page that does not escape it, in text, in attributes and in JSON-LD. */
const LANDING_TITLE = `Landing check </script><script>document.title="owned"</script> <b>bold</b> & "quotes"`;

function base32Decode(text) {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0;
  let value = 0;
  const out = [];
  for (const ch of text.replace(/=+$/, "").toUpperCase()) {
    value = (value << 5) | alphabet.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** RFC 6238 (HMAC-SHA-1, 6 digits, 30 s), as an authenticator app computes it. */
function totp(secret) {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 1000 / 30)));
  const mac = createHmac("sha1", base32Decode(secret)).update(counter).digest();
  const offset = mac[mac.length - 1] & 15;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, "0");
}

async function call(base, method, p, { token, json, form } = {}) {
  const headers = {};
  if (token) headers.authorization = `Bearer ${token}`;
  let body;
  if (json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(json);
  } else if (form !== undefined) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(form).toString();
  }
  const response = await fetch(base + p, { method, headers, body, signal: AbortSignal.timeout(60_000) });
  const text = await response.text();
  return { status: response.status, json: () => JSON.parse(text), text };
}

async function expectCall(promise, what, ...statuses) {
  const response = await promise;
  if (!statuses.includes(response.status)) throw new Error(`${what} answered ${response.status}: ${response.text.slice(0, 300)}`);
  return response;
}

/** Builds a release through the API and waits for its publication; returns its version. */
async function buildRelease(base, admin) {
  const login = (
    await expectCall(
      call(base, "POST", "/v1/auth/bearer/login", { form: { username: admin.email, password: admin.password } }),
      "login",
      200,
    )
  ).json();
  const setup = (await expectCall(call(base, "POST", "/v1/auth/mfa/totp/setup", { token: login.access_token }), "TOTP setup", 200)).json();
  const confirmed = await expectCall(
    call(base, "POST", "/v1/auth/mfa/totp/confirm", {
      token: login.access_token,
      json: { setup_token: setup.setup_token, code: totp(setup.secret), current_password: admin.password },
    }),
    "TOTP confirm",
    200,
  );
  const token = confirmed.json().tokens.access_token;
  await expectCall(call(base, "POST", "/v1/users/me/contributor-terms", { token, json: { version: 1 } }), "contributor terms", 200);
  await expectCall(
    call(base, "POST", "/v1/products", { token, json: { name: "Kettle <i>taken apart</i>", weight_g: 1200 } }),
    "product",
    201,
  );
  const version = "0.1";
  await expectCall(
    call(base, "POST", "/v1/admin/releases", {
      token,
      json: { version, title: LANDING_TITLE, description: "A <em>release</em> for the browser check." },
    }),
    "release",
    202,
  );
  const deadline = Date.now() + 120_000;
  for (;;) {
    const release = (await expectCall(call(base, "GET", `/v1/releases/${version}`, { token }), "release read", 200)).json();
    if (release.status === "published") return version;
    if (release.status === "failed") throw new Error(`the release failed: ${release.failure_reason}`);
    if (Date.now() > deadline) throw new Error("the release was not published within 120 s");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** schema.org Dataset properties dataset search engines require and recommend, as the landing page's JSON-LD must carry them. */
const DATASET_PROPERTIES = [
  "name",
  "description",
  "url",
  "identifier",
  "version",
  "license",
  "creator",
  "publisher",
  "datePublished",
  "isAccessibleForFree",
  "distribution",
  "includedInDataCatalog",
];

async function checkLandingPage(cdp, base, version) {
  const url = `${base}/v1/releases/${version}`;
  const release = (await expectCall(call(base, "GET", `/v1/releases/${version}`), "release JSON", 200)).json();
  const tab = await openTab(cdp);
  await tab.send("Page.bringToFront");
  // A browser's own Accept header asks for text/html: the negotiation a person's click goes through.
  await tab.send("Page.navigate", { url });
  let page = null;
  const deadline = Date.now() + RENDER_TIMEOUT_MS;
  while (Date.now() < deadline) {
    page = await tab.evaluate(`(() => {
      if (document.readyState !== "complete") return null;
      const ld = document.querySelector('script[type="application/ld+json"]');
      let dataset = null;
      try { dataset = JSON.parse(ld?.textContent ?? "null"); } catch {}
      return {
        documentTitle: document.title,
        title: document.getElementById("title")?.textContent ?? null,
        citation: document.getElementById("citation")?.textContent ?? null,
        buttonShown: document.getElementById("copy-citation")?.hidden === false,
        files: [...document.querySelectorAll("#files tbody tr")].map((row) => row.cells[0].textContent),
        hrefs: [...document.querySelectorAll("#files tbody a")].map((a) => a.href),
        bold: document.querySelectorAll("main b").length,
        scripts: document.querySelectorAll("script").length,
        dataset,
        csp: window.__cspViolations ?? [],
      };
    })()`);
    if (page) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!page) throw new Error(`${url} did not load within ${RENDER_TIMEOUT_MS / 1000} s`);
  // The copy button: the clipboard (headless Chromium may refuse it) or, failing that, a selection.
  const copied = await tab.evaluate(`(async () => {
    document.getElementById("copy-citation").click();
    for (let i = 0; i < 50 && !document.getElementById("copy-status").textContent; i++) await new Promise((r) => setTimeout(r, 20));
    return { status: document.getElementById("copy-status").textContent, selection: String(window.getSelection()) };
  })()`);
  if (args.screenshot) {
    const shot = (await tab.send("Page.captureScreenshot", { format: "png" })).data;
    writeFileSync(args.screenshot.replace(/(\.png)?$/, "-landing.png"), Buffer.from(shot, "base64"));
  }
  const dataset = page.dataset ?? {};
  const missing = DATASET_PROPERTIES.filter((name) => dataset[name] === undefined);
  const downloads = Array.isArray(dataset.distribution) ? dataset.distribution : [];
  const badDownloads = downloads.filter((d) => d["@type"] !== "DataDownload" || !d.contentUrl || !d.encodingFormat || !d.contentSize);
  const expectedFiles = release.files.map((file) => file.path);
  const checks = [
    [
      "landing: the title shows as text (markup and </script> escaped)",
      page.title === release.title && page.bold === 0 && page.documentTitle.startsWith(release.title),
      `title: ${page.title}, <b> elements: ${page.bold}, document title: ${page.documentTitle}`,
    ],
    ["landing: only its own two script elements", page.scripts === 2, `${page.scripts} script elements`],
    ["landing: the citation is the release's", page.citation === release.citation, `citation: ${page.citation}`],
    [
      "landing: its JSON-LD is a schema.org Dataset with the required and recommended properties",
      dataset["@type"] === "Dataset" && dataset.name === release.title && missing.length === 0,
      `missing: ${missing.join(", ")}; @type ${dataset["@type"]}; name ${dataset.name}`,
    ],
    [
      `landing: the JSON-LD has the ${expectedFiles.length} files as DataDownloads`,
      downloads.length === expectedFiles.length && badDownloads.length === 0,
      `${downloads.length} downloads, ${badDownloads.length} incomplete`,
    ],
    [
      "landing: every file is listed with a link to it",
      JSON.stringify(page.files) === JSON.stringify(expectedFiles) && page.hrefs.every((href) => href.startsWith(`${url}/files/`)),
      `files: ${page.files.join(", ")}`,
    ],
    [
      "landing: the copy button is shown and copies (or selects) the citation",
      page.buttonShown && (copied.status === "Copied." || copied.selection === release.citation),
      `button shown: ${page.buttonShown}; status: ${copied.status}; selection: ${copied.selection}`,
    ],
    ...commonChecks(tab, new URL(base).origin, page.csp).map(([name, ok, detail]) => [`landing: ${name}`, ok, detail]),
  ];
  return { url, checks };
}

async function main() {
  const started = Date.now();
  const chromium = findChromium();
  const started_api = args.base ? { base: args.base.replace(/\/$/, ""), admin: null } : await startApi();
  const { base, admin } = started_api;
  const apiReady = Date.now();
  const cdp = await connect(await startChromium(chromium));

  const docs = await checkDocsPage(cdp, base);
  const rendered = Date.now();
  // The API this script started gets a release of its own; one given with --base is looked at as it is.
  let version = null;
  if (admin) version = await buildRelease(base, admin);
  else {
    const latest = await call(base, "GET", "/v1/releases/latest");
    if (latest.status === 200) version = latest.json().version;
  }
  const landing = version === null ? { url: "(no published release)", checks: [] } : await checkLandingPage(cdp, base, version);
  if (version === null) console.log("skip the landing page: the API at --base has no published release");

  const checks = [...docs.checks, ...landing.checks];
  let failed = 0;
  for (const [name, ok, detail] of checks) {
    console.log(`${ok ? "ok  " : "FAIL"} ${name}${ok ? "" : `\n  ${detail}`}`);
    if (!ok) failed++;
  }
  console.log(
    `${docs.url}, ${landing.url}: API ready in ${((apiReady - started) / 1000).toFixed(1)} s, docs rendered in ${((rendered - apiReady) / 1000).toFixed(1)} s; total ${((Date.now() - started) / 1000).toFixed(1)} s`,
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
