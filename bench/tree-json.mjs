// `node bench/tree-json.mjs [--runs N]`: the tree route's JavaScript without workerd or D1, in Node:
// 1,000 rows shaped like the `product-tree` scenario's (10 components with 99 each), turned into
// the answer's JSON text the way the route did before issue 24 (`nestRows` + `toComponentSummary`
// objects, then `JSON.stringify`) and the way it does now (`componentTreeJson`, written member by
// member), checked equal byte for byte, then each timed (median of N calls, after 20 unrecorded).
// Bundled from src/ with esbuild, as bench/media.mjs does. See bench/README.md, Issue 24.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const ROOT = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { runs: { type: "string" } } });
const runs = Number(values.runs ?? 200);

const dir = mkdtempSync(path.join(os.tmpdir(), "relab-tree-json-"));
try {
  const entry = [
    `export { nestRows } from ${JSON.stringify(path.join(ROOT, "src/services/products/component-tree.ts"))};`,
    `export { componentTreeJson, toComponentSummary } from ${JSON.stringify(path.join(ROOT, "src/routes/products/products.mappers.ts"))};`,
  ].join("\n");
  const outfile = path.join(dir, "tree.mjs");
  await build({
    stdin: { contents: entry, resolveDir: ROOT, loader: "ts" },
    bundle: true,
    format: "esm",
    platform: "node",
    logLevel: "error",
    outfile,
  });
  const lib = await import(pathToFileURL(outfile).href);

  const ROOT_ID = 1;
  const rows = [];
  let id = 1;
  const row = (parentId, i) => ({
    id: ++id,
    parent_id: parentId,
    owner_id: 7,
    owner_username: "bench_products_0",
    owner_visibility: "public",
    name: `Part ${i}`,
    description: null,
    brand: null,
    model: null,
    weight_g: null,
    height_cm: null,
    width_cm: null,
    depth_cm: null,
    volume_cm3: null,
    circularity_properties: null,
    product_type_id: null,
    product_type_name: null,
    amount_in_parent: 1 + (i % 10),
    depth: 2,
    version: 1,
    created_at: 1_764_180_000,
    updated_at: 1_764_180_000,
    level: 1,
  });
  for (let i = 0; i < 10; i++) {
    const top = row(ROOT_ID, i);
    rows.push(top);
    for (let j = 0; j < 99; j++) rows.push(row(top.id, j));
  }
  const before = () => JSON.stringify(lib.nestRows(ROOT_ID, rows, (r) => lib.toComponentSummary(r, null)));
  const after = () => lib.componentTreeJson(ROOT_ID, rows, null);
  const text = before();
  if (after() !== text) throw new Error("tree-json: the two answers differ");
  const time = (fn) => {
    for (let i = 0; i < 20; i++) fn();
    const ms = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      fn();
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    return ms[Math.floor(ms.length / 2)];
  };
  const objects = time(before);
  const writer = time(after);
  console.log(
    `tree of ${rows.length} components, ${(text.length / 1024).toFixed(0)} KiB of JSON, equal byte for byte; median of ${runs} calls in Node ${process.version}:`,
  );
  console.log(`  objects (nestRows + toComponentSummary) + JSON.stringify: ${objects.toFixed(2)} ms`);
  console.log(
    `  componentTreeJson (written member by member):            ${writer.toFixed(2)} ms  (×${(objects / writer).toFixed(1)} faster)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
