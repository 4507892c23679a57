// Fills the local D1 database with a demo dataset: N realistic base products (of the starter
// product types, made-up brands) with component trees two or three levels deep and bills of
// materials naming starter materials, owned by the demo account `demo_contributor` (no password,
// cannot sign in). For trying the API and for the bench.
//
//   npm run seed:demo -- --products 10000 [--seed 1] [--reset] [--persist-to <dir>] [--sql-out <file>]
//
// --products N   how many base products to add (default 100; 0 with --reset removes the demo data).
// --seed S       PRNG seed (default 1): the same N and seed give the same products.
// --reset        delete the demo account's earlier products first. Without it, every run ADDS
//                another N products (with the same seed, copies of the previous run's under new ids).
// --persist-to   the state directory, as for `wrangler d1 execute` (default: .wrangler/state).
// --sql-out F    write the SQL to F instead of running it.
//
// The starter data is seeded in the same batch (idempotent), so this needs nothing but the
// migrations (`npm run db:migrate:local`, or one `npm start`). Everything runs as ONE
// `wrangler d1 execute --local --file` call, i.e. one D1 batch: it all lands or nothing does. The
// product ids are reserved from `id_blocks` in that batch, as the API's creates reserve them.
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { DEMO_COUNTS_QUERY, demoStatements } from "./seed/demo-data.mjs";
import { executeLocal } from "./seed-starter.mjs";

const { values } = parseArgs({
  options: {
    products: { type: "string", default: "100" },
    seed: { type: "string", default: "1" },
    reset: { type: "boolean", default: false },
    "persist-to": { type: "string" },
    "sql-out": { type: "string" },
  },
});
const products = Number(values.products);
const seed = Number(values.seed);
if (!Number.isInteger(products) || products < (values.reset ? 0 : 1) || products > 1_000_000) {
  console.error("--products must be an integer from 1 to 1000000 (or 0 with --reset)");
  process.exit(2);
}
if (!Number.isInteger(seed)) {
  console.error("--seed must be an integer");
  process.exit(2);
}

const started = performance.now();
const elapsed = () => ((performance.now() - started) / 1000).toFixed(1);
const statements = [...demoStatements({ products, seed, reset: values.reset }), DEMO_COUNTS_QUERY];
const megabytes = (statements.reduce((sum, s) => sum + s.length + 1, 0) / 1e6).toFixed(1);
console.log(`Generated ${statements.length} statements (${megabytes} MB of SQL) in ${elapsed()} s.`);

if (values["sql-out"]) {
  writeFileSync(values["sql-out"], statements.join("\n") + "\n");
  console.log(`Wrote ${values["sql-out"]}.`);
  process.exit(0);
}

try {
  const results = await executeLocal(statements, { persistTo: values["persist-to"] });
  const counts = results.at(-1)[0];
  console.log(
    `${values.reset ? "Deleted the earlier demo products and added" : "Added"} ${products} demo products in ${elapsed()} s. ` +
      `The demo account now owns ${counts.base_products} base products, ${counts.components} components ` +
      `(max depth ${counts.max_depth}) and ${counts.bom_entries} bill-of-materials entries; next product id ${counts.next_product_id}.`,
  );
} catch (error) {
  console.error(`Seeding the demo data failed after ${elapsed()} s: ${error?.message ?? error}`);
  process.exit(1);
}
