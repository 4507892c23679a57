// Builds the worker like a deploy does and starts each bench target as its own Miniflare
// instance (one workerd process, one socket on 127.0.0.1) with no wrangler dev proxy in front.
import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { Miniflare } from "miniflare";

export const COMPATIBILITY_DATE = "2026-04-26";
export const HOST = "127.0.0.1";
export const BOOTSTRAP = { email: "bench-admin@relab.localhost", password: "bench-password-not-secret" };

/** Top-level [vars] of wrangler.toml (the local-development environment), read with wrangler's own parser. */
async function wranglerVars(root) {
  const { unstable_readConfig } = await import("wrangler");
  return unstable_readConfig({ config: path.join(root, "wrangler.toml") }, {}).vars;
}

const TRIVIAL_SCRIPT = `export default { fetch() { return new Response("ok") } }`;
const SELECT1_SCRIPT = `export default {
  async fetch(request, env) {
    await env.DB.prepare("SELECT 1").first();
    return new Response("ok");
  },
};`;

/** Runs `wrangler deploy --dry-run --outdir <outdir>` and returns the path of the bundle. */
export async function buildWorker(root, outdir) {
  const wrangler = path.join(root, "node_modules/.bin/wrangler");
  // --env="" targets the top-level environment explicitly (what wrangler.toml calls local).
  const args = ["deploy", "--dry-run", "--outdir", outdir, "--env="];
  const env = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "1" };
  const output = [];
  const code = await new Promise((resolve, reject) => {
    const child = spawn(wrangler, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (chunk) => output.push(chunk));
    child.stderr.on("data", (chunk) => output.push(chunk));
    child.on("error", reject);
    child.on("close", resolve);
  });
  if (code !== 0) {
    throw new Error(`wrangler ${args.join(" ")} exited with ${code}:\n${Buffer.concat(output)}`);
  }
  return path.join(outdir, "index.js");
}

/** Keeps the last lines workerd printed (the app logs one line per request) without echoing them. */
function stdioTail(limit = 40) {
  const lines = [];
  const keep = (stream) => {
    let partial = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk) => {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        if (lines.length > limit) lines.shift();
      }
    });
  };
  return { lines, handleRuntimeStdio: (stdout, stderr) => (keep(stdout), keep(stderr)) };
}

/**
 * Starts one Miniflare instance. By default the target is served on a direct socket
 * (`unsafeDirectSockets`): workerd's HTTP server hands each request straight to the worker. The
 * instance's main socket (`port`) goes through Miniflare's entry worker first, a second worker
 * invocation plus a service-binding hop per request that costs about two thirds of a trivial
 * worker's throughput here; `viaEntry` measures through it anyway, for comparison.
 */
async function start(name, options, port, viaEntry) {
  const tail = stdioTail();
  const mf = new Miniflare({
    host: HOST,
    port: viaEntry ? port : 0,
    ...(viaEntry ? {} : { unsafeDirectSockets: [{ host: HOST, port }] }),
    compatibilityDate: COMPATIBILITY_DATE,
    modules: true,
    // The entry worker would otherwise build a log line per request (and post it to Node when a
    // log is set); that is harness cost, not worker cost.
    logRequests: false,
    handleRuntimeStdio: tail.handleRuntimeStdio,
    ...options,
  });
  let url;
  try {
    url = await mf.ready;
    if (!viaEntry) url = await mf.unsafeGetDirectURL();
  } catch (error) {
    await mf.dispose().catch(() => {});
    throw new Error(`${name}: Miniflare failed to start: ${error?.message ?? error}\n${tail.lines.join("\n")}`);
  }
  return { name, mf, url: url.href.replace(/\/$/, ""), logTail: tail.lines };
}

/** The two reference workers. Their D1 round trips per request are 0 and 1 by construction. */
export async function startBaselines(portFor, viaEntry) {
  const trivial = await start("baseline-trivial", { script: TRIVIAL_SCRIPT }, portFor(0), viaEntry);
  const targets = [{ ...trivial, kind: "baseline", d1RoundTrips: 0 }];
  try {
    const select1 = await start(
      "baseline-d1-select1",
      { script: SELECT1_SCRIPT, d1Databases: { DB: "bench-select1" } },
      portFor(1),
      viaEntry,
    );
    targets.push({ ...select1, kind: "baseline", d1RoundTrips: 1 });
  } catch (error) {
    await disposeAll(targets);
    throw error;
  }
  return targets;
}

/** The app, with every binding of wrangler.toml's top level, in memory. */
export async function startApp(root, scriptPath, port, viaEntry) {
  const vars = await wranglerVars(root);
  return start(
    "app",
    {
      scriptPath,
      d1Databases: { DB: "bench-relab" },
      kvNamespaces: ["KV"],
      r2Buckets: ["UPLOADS"],
      queueProducers: { MEDIA_QUEUE: "relab-media" },
      durableObjects: { CAMERA_RELAY: { className: "CameraRelay", useSQLite: true } },
      bindings: {
        ...vars,
        BOOTSTRAP_SUPERUSER_EMAIL: BOOTSTRAP.email,
        BOOTSTRAP_SUPERUSER_PASSWORD: BOOTSTRAP.password,
      },
    },
    port,
    viaEntry,
  );
}

export async function disposeAll(targets) {
  const results = await Promise.allSettled(targets.map((t) => t.mf.dispose()));
  const failed = results.filter((r) => r.status === "rejected");
  if (failed.length) console.error(`warning: ${failed.length} Miniflare instance(s) failed to dispose`);
}

/**
 * Splits a migration into statements: drizzle-kit's `--> statement-breakpoint` first, then on
 * semicolons outside quotes and comments (hand-written migrations have no breakpoints). A chunk
 * holding CREATE TRIGGER is kept whole, since its body contains semicolons.
 */
export function splitSql(sql) {
  const statements = [];
  for (const chunk of sql.split("--> statement-breakpoint")) {
    if (/\bCREATE\s+(TEMP\w*\s+)?TRIGGER\b/i.test(chunk)) {
      if (chunk.trim()) statements.push(chunk.trim());
      continue;
    }
    let current = "";
    let quote = null;
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk[i];
      if (quote) {
        current += ch;
        if (ch === quote) quote = null;
      } else if (ch === "-" && chunk[i + 1] === "-") {
        const end = chunk.indexOf("\n", i);
        i = end === -1 ? chunk.length : end;
        current += "\n";
      } else if (ch === "/" && chunk[i + 1] === "*") {
        const end = chunk.indexOf("*/", i + 2);
        i = end === -1 ? chunk.length : end + 1;
      } else if (ch === ";") {
        if (current.trim()) statements.push(current.trim());
        current = "";
      } else {
        if (ch === "'" || ch === '"' || ch === "`") quote = ch;
        else if (ch === "[") quote = "]";
        current += ch;
      }
    }
    if (current.trim()) statements.push(current.trim());
  }
  return statements;
}

/** Applies every migrations/*.sql in file-name order, one atomic batch per file. */
export async function applyMigrations(db, migrationsDir) {
  const files = (await readdir(migrationsDir)).filter((f) => f.endsWith(".sql")).sort();
  const applied = [];
  for (const file of files) {
    const statements = splitSql(await readFile(path.join(migrationsDir, file), "utf8"));
    if (statements.length === 0) continue;
    try {
      await db.batch(statements.map((s) => db.prepare(s)));
    } catch (error) {
      throw new Error(`migration ${file} failed: ${error?.message ?? error}`);
    }
    applied.push({ file, statements: statements.length });
  }
  return applied;
}

/** One request; returns its status and the D1 round trips of its Server-Timing header (or null). */
export async function probe(url, request) {
  const response = await fetch(url + request.path, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  });
  const text = await response.text();
  const timing = response.headers.get("server-timing") ?? "";
  const match = /(?:^|,)\s*d1\s*;[^,]*desc="(\d+) round trips?"/.exec(timing);
  return {
    status: response.status,
    d1RoundTrips: match ? Number(match[1]) : null,
    serverTiming: timing || null,
    bodySample: text.slice(0, 300),
  };
}
