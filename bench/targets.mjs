// Builds the worker like a deploy does and starts each bench target as its own Miniflare
// instance (one workerd process, one socket on 127.0.0.1) with no wrangler dev proxy in front.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";

export const HOST = "127.0.0.1";
export const BOOTSTRAP = { email: "bench-admin@relab.localhost", password: "bench-password-not-secret" };

/** The top level of wrangler.jsonc (the local-development environment), read with wrangler's own parser. */
export function readWranglerConfig(root) {
  return unstable_readConfig({ config: path.join(root, "wrangler.jsonc") }, {});
}

export const TRIVIAL_SCRIPT = `export default { fetch() { return new Response("ok") } }`;
export const SELECT1_SCRIPT = `export default {
  async fetch(request, env) {
    await env.DB.prepare("SELECT 1").first();
    return new Response("ok");
  },
};`;

/** Runs `wrangler deploy --dry-run --outdir <outdir>` and returns the path of the bundle. */
export async function buildWorker(root, outdir) {
  const wrangler = path.join(root, "node_modules/.bin/wrangler");
  // --env="" targets the top-level environment explicitly (what wrangler.jsonc calls local).
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

/**
 * Keeps the last lines workerd printed (the app logs one line per request) without echoing them,
 * and counts the app's "rate limiter unavailable" errors: a counter-store call that failed or
 * timed out lets a read through unlimited (fail open), so a run with any of them did not measure
 * the limiter it claims to.
 */
function stdioTail(limit = 40) {
  const lines = [];
  const counts = { limiterUnavailable: 0 };
  const keep = (stream) => {
    let partial = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk) => {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) {
        if (line.includes('"rate limiter unavailable"')) counts.limiterUnavailable++;
        lines.push(line);
        if (lines.length > limit) lines.shift();
      }
    });
  };
  return { lines, counts, handleRuntimeStdio: (stdout, stderr) => (keep(stdout), keep(stderr)) };
}

/**
 * Starts one Miniflare instance. By default the target is served on a direct socket
 * (`unsafeDirectSockets`): workerd's HTTP server hands each request straight to the worker. The
 * instance's main socket (`port`) goes through Miniflare's entry worker first, a second worker
 * invocation plus a service-binding hop per request that costs about two thirds of a trivial
 * worker's throughput here; `viaEntry` measures through it anyway, for comparison.
 */
export async function start(name, options, port, viaEntry, compatibilityDate, compatibilityFlags = []) {
  const tail = stdioTail();
  const mf = new Miniflare({
    host: HOST,
    port: viaEntry ? port : 0,
    ...(viaEntry ? {} : { unsafeDirectSockets: [{ host: HOST, port }] }),
    compatibilityDate,
    compatibilityFlags,
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
  return { name, mf, url: url.href.replace(/\/$/, ""), logTail: tail.lines, logCounts: tail.counts };
}

/** The two reference workers. Their D1 round trips per request are 0 and 1 by construction. */
export async function startBaselines(config, portFor, viaEntry) {
  const date = config.compatibility_date;
  const trivial = await start("baseline-trivial", { script: TRIVIAL_SCRIPT }, portFor(0), viaEntry, date);
  const targets = [{ ...trivial, kind: "baseline", d1RoundTrips: 0 }];
  try {
    const select1 = await start(
      "baseline-d1-select1",
      { script: SELECT1_SCRIPT, d1Databases: { DB: "bench-select1" } },
      portFor(1),
      viaEntry,
      date,
    );
    targets.push({ ...select1, kind: "baseline", d1RoundTrips: 1 });
  } catch (error) {
    await disposeAll(targets);
    throw error;
  }
  return targets;
}

/**
 * The Durable Object bindings of wrangler.jsonc's top level (`durable_objects.bindings`), each
 * SQLite-backed when a `[[migrations]]` entry lists its class in `new_sqlite_classes`, as on
 * deploy. The classes are exported by the bundle itself (src/index.ts).
 */
export function durableObjectsFrom(config) {
  const sqlite = new Set((config.migrations ?? []).flatMap((m) => m.new_sqlite_classes ?? []));
  const bindings = config.durable_objects?.bindings ?? [];
  for (const b of bindings) {
    if (b.script_name) throw new Error(`durable object ${b.name}: script_name (${b.script_name}) is not supported by the bench`);
  }
  return Object.fromEntries(bindings.map((b) => [b.name, { className: b.class_name, useSQLite: sqlite.has(b.class_name) }]));
}

/**
 * The app, with the bindings and variables of wrangler.jsonc's top level, in memory, plus the
 * secrets it requires (.dev.vars.example): a random AUTH_TOKEN_SECRET and the bootstrap
 * superuser. The queue consumer is not attached unless `miniflare` adds one (bench/media.mjs does;
 * no scenario sends media work). `vars`
 * overrides variables (e.g. `RATE_LIMITS_ENABLED: "false"` for the limits-off instance); `name`
 * labels the instance in errors; `doStorage` is "tmpfs" or "disk" (durableObjectStorage).
 */
export async function startApp(config, scriptPath, port, viaEntry, { name = "app", vars = {}, doStorage = "tmpfs", miniflare = {} } = {}) {
  const persist = durableObjectStorage(doStorage);
  const app = await start(
    name,
    {
      scriptPath,
      // The bundle imports the Argon2id WebAssembly (src/auth/password.ts) as a separate file next
      // to index.js; like wrangler's own upload, it is loaded as a precompiled module.
      modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
      d1Databases: { DB: "bench-relab" },
      kvNamespaces: ["KV"],
      r2Buckets: ["UPLOADS"],
      queueProducers: { MEDIA_QUEUE: "relab-media", EVENTS_QUEUE: "relab-events" },
      // RATE_LIMITER (one counter object per subject) and CAMERA_RELAY, from wrangler.jsonc.
      durableObjects: durableObjectsFrom(config),
      ...persist.options,
      ...miniflare,
      bindings: {
        ...config.vars,
        // A secret, so not in wrangler.jsonc: signs access and email-link tokens; a fresh one per run.
        AUTH_TOKEN_SECRET: randomBytes(32).toString("hex"),
        DATA_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
        BOOTSTRAP_SUPERUSER_EMAIL: BOOTSTRAP.email,
        BOOTSTRAP_SUPERUSER_PASSWORD: BOOTSTRAP.password,
        ...vars,
      },
    },
    port,
    viaEntry,
    config.compatibility_date,
    config.compatibility_flags ?? [],
  ).catch((error) => {
    persist.remove();
    throw error;
  });
  return { ...app, vars: { ...config.vars, ...vars }, doStorage: persist.kind, removeStorage: persist.remove };
}

/**
 * Where the Durable Objects keep their SQLite files; removed when the instance is disposed.
 * Miniflare's default is a temporary directory on disk (wrangler dev: .wrangler/state), where
 * every counter write is a SQLite commit to this machine's disk inside the one workerd process
 * that also serves the app: on this VM the disk then costs the reads more than the limiter's own
 * work (on Cloudflare each object runs apart from the calling worker). "tmpfs" (default) keeps the same
 * SQLite files in memory (/dev/shm): the objects still run and store exactly as on disk, without
 * the disk. (Miniflare's in-memory storage, `unsafeEphemeralDurableObjects`, is not
 * SQLite-backed: the limiter's SQL calls fail there.) "disk": Miniflare's default.
 */
function durableObjectStorage(kind) {
  if (kind === "disk") return { kind: "disk", options: {}, remove: () => {} };
  if (kind !== "tmpfs") throw new Error(`unknown Durable Object storage ${kind}`);
  const shm = "/dev/shm";
  const base = existsSync(shm) ? shm : os.tmpdir();
  const dir = mkdtempSync(path.join(base, "relab-bench-do-"));
  return {
    kind: base === shm ? "tmpfs" : "disk (no /dev/shm)",
    options: { durableObjectsPersist: dir },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export async function disposeAll(targets) {
  const results = await Promise.allSettled(
    targets.map(async (t) => {
      try {
        await t.mf.dispose();
      } finally {
        t.removeStorage?.();
      }
    }),
  );
  const failed = results.filter((r) => r.status === "rejected");
  if (failed.length) console.error(`warning: ${failed.length} Miniflare instance(s) failed to dispose`);
}

/**
 * Applies every migration in order, one atomic batch per file, split into statements by the
 * test pool's `readD1Migrations` (the same reader the tests use).
 */
export async function applyMigrations(db, migrationsDir) {
  const applied = [];
  for (const migration of await readD1Migrations(migrationsDir)) {
    if (migration.queries.length === 0) continue;
    try {
      await db.batch(migration.queries.map((query) => db.prepare(query)));
    } catch (error) {
      throw new Error(`migration ${migration.name} failed: ${error?.message ?? error}`);
    }
    applied.push({ file: migration.name, statements: migration.queries.length });
  }
  return applied;
}

/** One request; returns its status, and the D1 round trips and counter-store calls of its Server-Timing header (or null). */
export async function probe(url, request) {
  const response = await fetch(url + request.path, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  });
  const text = await response.text();
  // Server-Timing (development only): `d1;desc="N round trips", d1-rows;desc="read R, written W", d1-time;dur=T, limiter;desc="M calls"`.
  const timing = response.headers.get("server-timing") ?? "";
  const d1 = /(?:^|,)\s*d1\s*;[^,]*desc="(\d+) round trips?"/.exec(timing);
  const rows = /(?:^|,)\s*d1-rows\s*;[^,]*desc="read (\d+), written (\d+)/.exec(timing);
  const limiter = /(?:^|,)\s*limiter\s*;[^,]*desc="(\d+) calls?"/.exec(timing);
  return {
    status: response.status,
    d1RoundTrips: d1 ? Number(d1[1]) : null,
    d1RowsRead: rows ? Number(rows[1]) : null,
    d1RowsWritten: rows ? Number(rows[2]) : null,
    limiterCalls: limiter ? Number(limiter[1]) : null,
    rateLimitPolicy: response.headers.get("ratelimit-policy"),
    serverTiming: timing || null,
    bodySample: text.slice(0, 300),
  };
}
