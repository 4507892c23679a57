// Seeds the starter reference data (scripts/seed/starter-data.mjs) into the local D1 database:
// a product taxonomy, a materials taxonomy with densities and CRM flags, and product types.
// Idempotent: running it again changes nothing. `npm start` runs it after the migrations
// (scripts/prepare-local.mjs).
//
//   npm run seed:starter [-- --persist-to <dir>]
//
// --persist-to: the state directory, as for `wrangler d1 execute` (default: .wrangler/state).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { starterStatements } from "./seed/starter-data.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Counts of the reference tables, as the last statement of a seed file. */
export const COUNTS_QUERY = `SELECT
  (SELECT count(*) FROM units) AS units,
  (SELECT count(*) FROM taxonomies) AS taxonomies,
  (SELECT count(*) FROM categories) AS categories,
  (SELECT count(*) FROM materials) AS materials,
  (SELECT count(*) FROM material_categories) AS material_links,
  (SELECT count(*) FROM product_types) AS product_types,
  (SELECT count(*) FROM product_type_categories) AS product_type_links;`;

/**
 * Runs SQL statements against the local D1 database with ONE `wrangler d1 execute --local --file`
 * call. Wrangler runs a file's statements as one D1 batch, so they commit together or not at all.
 * Returns the rows of each statement (wrangler's --json output).
 */
export async function executeLocal(statements, { persistTo } = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "relab-seed-"));
  const file = path.join(dir, "seed.sql");
  writeFileSync(file, statements.join("\n") + "\n");
  const args = ["d1", "execute", "DB", "--local", "--json", "--file", file];
  if (persistTo) args.push("--persist-to", persistTo);
  const bin = path.join(ROOT, "node_modules", ".bin", "wrangler");
  try {
    const { code, stdout, stderr } = await new Promise((resolve, reject) => {
      // CI=1: no prompts; CLOUDFLARE_CF_FETCH_ENABLED=false: no network lookups for local work.
      const child = spawn(bin, args, {
        cwd: ROOT,
        env: { ...process.env, CI: "1", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const out = [];
      const err = [];
      child.stdout.on("data", (chunk) => out.push(chunk));
      child.stderr.on("data", (chunk) => err.push(chunk));
      child.on("error", reject);
      child.on("close", (status) =>
        resolve({ code: status, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }),
      );
    });
    if (code !== 0) throw new Error(`wrangler ${args.join(" ")} exited with ${code}:\n${stdout}\n${stderr}`);
    const parsed = JSON.parse(stdout.slice(stdout.indexOf("[")));
    return parsed.map((result) => result.results ?? []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Seeds the starter data and returns the reference tables' counts afterwards. */
export async function seedStarter(options = {}) {
  const results = await executeLocal([...starterStatements(), COUNTS_QUERY], options);
  return results.at(-1)[0];
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { values } = parseArgs({ options: { "persist-to": { type: "string" } } });
  const started = performance.now();
  try {
    const counts = await seedStarter({ persistTo: values["persist-to"] });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `Starter data in place (${seconds} s): ${Object.entries(counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`,
    );
  } catch (error) {
    console.error(`Seeding the starter data failed: ${error?.message ?? error}`);
    process.exit(1);
  }
}
