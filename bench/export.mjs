// The export section of `npm run bench` (bench/README.md, Exports): the full CSV and JSON export
// of the demo dataset (10,000 base products with their components), served by its own app
// instance, against the raw speed of reading the same rows from the same SQLite file in Node.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { demoStatements } from "../scripts/seed/demo-data.mjs";
import { rssKiB, sampleMemory, workerdPids } from "./memory.mjs";
import { applyMigrations, probe, startApp } from "./targets.mjs";

export const EXPORT_PRODUCTS = 10_000;
const EDGE_HEADERS = { "cf-connecting-ip": "10.9.0.1" };

/** One full export: time to the first body bytes, total time, bytes, and the body (kept for one check). */
async function timeExport(url, format, keepBody) {
  const started = performance.now();
  const request = () => fetch(`${url}/v1/products/export?format=${format}`, { headers: EDGE_HEADERS });
  // workerd may close a kept-alive connection just as it is reused ("other side closed"): a GET
  // that got no answer is safe to send again, once, on a new connection.
  const response = await request()
    .catch(() => request())
    .catch((error) => {
      throw new Error(`export ${format}: ${error.message} (${error.cause?.message ?? "no cause"})`);
    });
  if (response.status !== 200) throw new Error(`export ${format} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  const reader = response.body.getReader();
  let ttfb = null;
  let bytes = 0;
  let crlf = 0;
  let last = 0;
  const kept = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    ttfb ??= performance.now() - started;
    bytes += value.length;
    // CSV records end with CRLF; no demo cell holds one, so counting them counts the records.
    for (let i = 0; i < value.length; i++) {
      if (value[i] === 10 && last === 13) crlf += 1;
      last = value[i];
    }
    if (keepBody) kept.push(value);
  }
  const ms = performance.now() - started;
  return {
    ms,
    ttfb,
    bytes,
    crlf,
    serverTiming: response.headers.get("server-timing"),
    body: keepBody ? Buffer.concat(kept).toString("utf8") : null,
  };
}

function countJsonRecords(products) {
  let n = 0;
  const walk = (record) => {
    n += 1;
    for (const child of record.components) walk(child);
  };
  for (const product of products) walk(product);
  return n;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// What each format reads, as one plain query over the whole table: the records with the export's
// columns and joins, and the same per-record media (and for JSON, bill of materials and videos)
// subqueries, in depth-first order of the base products' ids. No service, no HTTP, no formatting:
// the limit of how fast the rows can come off this file.
const RECORD = `p.id, p.parent_id, p.owner_id, u.username, u.profile_visibility, p.name, p.description, p.brand, p.model,
  p.weight_g, p.height_cm, p.width_cm, p.depth_cm, p.volume_cm3, p.circularity_properties, p.product_type_id, t.name,
  p.amount_in_parent, p.depth, p.version, p.created_at, p.updated_at`;
const IMAGES = `(SELECT json_group_array(json_object('id', id, 'storage_key', storage_key)) FROM
  (SELECT id, storage_key FROM images WHERE product_id = p.id AND status = 'clean' ORDER BY id))`;
const JSON_EXTRA = `,
  (SELECT json_group_array(json_object('id', id, 'storage_key', storage_key)) FROM (SELECT id, storage_key FROM files WHERE product_id = p.id AND status = 'clean' ORDER BY id)),
  (SELECT json_group_array(json_object('material_id', material_id, 'material_name', material_name, 'quantity', quantity, 'unit', unit)) FROM
    (SELECT b.material_id, m.name AS material_name, b.quantity, b.unit FROM bill_of_materials b JOIN materials m ON m.id = b.material_id WHERE b.product_id = p.id ORDER BY m.name, b.material_id)),
  CASE WHEN p.parent_id IS NULL THEN (SELECT json_group_array(json_object('id', id, 'url', url)) FROM (SELECT id, url FROM videos WHERE product_id = p.id ORDER BY id)) END`;
const rawQuery = (format) => `WITH RECURSIVE tree(id, root, path) AS (
    SELECT id, id, '' FROM products WHERE parent_id IS NULL
    UNION ALL SELECT k.id, tree.root, tree.path || printf('%010d', k.id) FROM tree JOIN products k ON k.parent_id = tree.id)
  SELECT ${RECORD}, ${IMAGES}${format === "json" ? JSON_EXTRA : ""}
  FROM tree CROSS JOIN products p ON p.id = tree.id JOIN users u ON u.id = p.owner_id LEFT JOIN product_types t ON t.id = p.product_type_id
  ORDER BY tree.root DESC, tree.path`;

/** The D1 database file Miniflare persisted under `dir` (the largest `.sqlite`). */
export function findSqlite(dir) {
  const found = [];
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".sqlite")) found.push({ full, size: statSync(full).size });
    }
  };
  walk(dir);
  found.sort((a, b) => b.size - a.size);
  if (!found[0]) throw new Error(`no .sqlite file under ${dir}`);
  return found[0].full;
}

async function rawReads(file, rounds) {
  const require = createRequire(import.meta.url);
  const initSqlJs = require("sql.js");
  const SQL = await initSqlJs();
  const db = new SQL.Database(readFileSync(file));
  const out = {};
  try {
    for (const format of ["csv", "json"]) {
      const runs = [];
      for (let r = 0; r < rounds + 1; r++) {
        const started = performance.now();
        const statement = db.prepare(rawQuery(format));
        let rows = 0;
        while (statement.step()) {
          statement.get();
          rows += 1;
        }
        statement.free();
        // The first pass is a warm-up (page cache, statement compile); the export gets one too.
        if (r > 0) runs.push({ ms: performance.now() - started, rows });
      }
      out[format] = {
        runs,
        rows: runs[0].rows,
        ms: median(runs.map((run) => run.ms)),
        rowsPerSecond: Math.round(runs[0].rows / (median(runs.map((run) => run.ms)) / 1000)),
      };
    }
  } finally {
    db.close();
  }
  return out;
}

/**
 * Starts `app-export` with its D1 database in a file, loads the demo dataset, times R full
 * exports per format (after one unrecorded), stops the instance (so SQLite folds its WAL into
 * the file), then times the raw reads of the same rows from that file with sql.js.
 */
export async function runExportBench({ root, config, bundle, port, viaEntry, doStorage, rounds, log }) {
  const base = existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir();
  const d1Dir = mkdtempSync(path.join(base, "relab-bench-d1-"));
  const before = new Set(workerdPids());
  let app;
  try {
    app = await startApp(config, bundle, port, viaEntry, { name: "app-export", doStorage, miniflare: { d1Persist: d1Dir } });
    const pid = workerdPids().find((p) => !before.has(p));
    const db = await app.mf.getD1Database("DB");
    await applyMigrations(db, path.join(root, "migrations"));
    const warm = await probe(app.url, { method: "GET", path: "/v1/units", headers: EDGE_HEADERS });
    if (warm.status !== 200) throw new Error(`app-export: warm-up answered ${warm.status}`);

    const seedStarted = performance.now();
    const statements = demoStatements({ products: EXPORT_PRODUCTS, seed: 1 });
    await db.batch(statements.map((statement) => db.prepare(statement)));
    const counts = await db
      .prepare("SELECT (SELECT count(*) FROM products) AS records, (SELECT count(*) FROM products WHERE parent_id IS NULL) AS products")
      .first();
    log(
      `app-export: loaded ${counts.products} demo products, ${counts.records} records, in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
    );

    const formats = {};
    for (const format of ["csv", "json"]) {
      const runs = [];
      for (let r = 0; r <= rounds; r++) {
        const rssBefore = pid ? rssKiB(pid) : null;
        const stop = pid ? sampleMemory(pid) : () => null;
        const run = await timeExport(app.url, format, r === 0);
        const peak = stop();
        if (r === 0) {
          // The unrecorded first export is the one checked: every record, once.
          const records = format === "csv" ? run.crlf - 1 : countJsonRecords(JSON.parse(run.body));
          if (records !== counts.records) throw new Error(`export ${format} held ${records} records, the database ${counts.records}`);
          continue;
        }
        runs.push({
          ms: run.ms,
          ttfbMs: run.ttfb,
          bytes: run.bytes,
          rssBeforeKiB: rssBefore,
          rssPeakKiB: peak,
          rssGrowthKiB: peak === null ? null : peak - rssBefore,
        });
        log(
          `export ${format} ${r}/${rounds}: ${(run.ms / 1000).toFixed(2)} s, first bytes ${run.ttfb.toFixed(0)} ms, ${(run.bytes / 2 ** 20).toFixed(1)} MiB, workerd RSS ${rssBefore} -> ${peak} KiB`,
        );
      }
      const ms = median(runs.map((run) => run.ms));
      formats[format] = {
        records: counts.records,
        ms: Math.round(ms),
        rowsPerSecond: Math.round(counts.records / (ms / 1000)),
        ttfbMs: Math.round(median(runs.map((run) => run.ttfbMs))),
        mib: +(runs[0].bytes / 2 ** 20).toFixed(1),
        rssGrowthKiB: pid ? Math.max(...runs.map((run) => run.rssGrowthKiB)) : null,
        rssPeakKiB: pid ? Math.max(...runs.map((run) => run.rssPeakKiB)) : null,
        runs,
      };
    }
    await app.mf.dispose();
    app.removeStorage?.();
    app = null;

    const file = findSqlite(d1Dir);
    const raw = await rawReads(file, rounds);
    for (const format of ["csv", "json"]) {
      if (raw[format].rows !== counts.records)
        throw new Error(`raw ${format} read ${raw[format].rows} rows, the database holds ${counts.records}`);
      formats[format].raw = { rowsPerSecond: raw[format].rowsPerSecond, ms: Math.round(raw[format].ms) };
      formats[format].ofRaw = +(formats[format].rowsPerSecond / raw[format].rowsPerSecond).toFixed(3);
    }
    return {
      products: counts.products,
      records: counts.records,
      rounds,
      sqliteFile: { bytes: statSync(file).size, where: base === "/dev/shm" ? "tmpfs" : "disk" },
      aim: "CSV export at least 1/3 of the raw read speed",
      aimMet: formats.csv.ofRaw >= 1 / 3,
      formats,
    };
  } catch (error) {
    if (app?.logTail.length) log(`last app-export worker output:\n${app.logTail.join("\n")}`);
    throw error;
  } finally {
    if (app) {
      await app.mf.dispose().catch(() => {});
      app.removeStorage?.();
    }
    rmSync(d1Dir, { recursive: true, force: true });
  }
}

/** The section's lines for the console. */
export function formatExport(result) {
  const lines = [
    `exports: ${result.products.toLocaleString("en")} demo base products, ${result.records.toLocaleString("en")} records; medians over ${result.rounds} rounds`,
    "format  records/s  time     first bytes  size      workerd RSS growth (peak)  raw records/s  of raw",
  ];
  for (const [format, f] of Object.entries(result.formats)) {
    lines.push(
      `${format.padEnd(7)} ${String(f.rowsPerSecond).padStart(9)}  ${(f.ms / 1000).toFixed(2).padStart(5)} s  ${String(f.ttfbMs).padStart(8)} ms  ` +
        `${String(f.mib).padStart(5)} MiB  ${f.rssGrowthKiB === null ? "n/a" : `${(f.rssGrowthKiB / 1024).toFixed(1)} MiB (${(f.rssPeakKiB / 1024).toFixed(0)} MiB)`.padStart(25)}  ` +
        `${String(f.raw.rowsPerSecond).padStart(13)}  ${f.ofRaw.toFixed(2)}`,
    );
  }
  lines.push(`aim (${result.aim}): ${result.aimMet ? "met" : "NOT met"}`);
  return lines.join("\n");
}
