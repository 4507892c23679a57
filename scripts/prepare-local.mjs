// Runs before `npm run dev` / `npm start`: gives a fresh clone its local secrets and an
// up-to-date local D1 database with the starter reference data, without prompting.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { seedStarter } from "./seed-starter.mjs";

const KEY = /^([A-Z0-9_]+)=/;
// Secrets that must differ between installs get a fresh random value instead of the example's.
const generated = {
  AUTH_TOKEN_SECRET: () => randomBytes(32).toString("hex"),
  DATA_ENCRYPTION_KEY: () => randomBytes(32).toString("hex"),
};

const example = readFileSync(".dev.vars.example", "utf8").split("\n");
const withLocalSecrets = (line) => {
  const name = KEY.exec(line)?.[1];
  return name && generated[name] ? `${name}=${generated[name]()}` : line;
};

if (!existsSync(".dev.vars")) {
  writeFileSync(".dev.vars", example.map(withLocalSecrets).join("\n"));
  console.log("Created .dev.vars from .dev.vars.example (local defaults; edit as you like).");
} else {
  // An older .dev.vars keeps its values but gains the variables added since it was made.
  const present = new Set(
    readFileSync(".dev.vars", "utf8")
      .split("\n")
      .map((line) => KEY.exec(line)?.[1])
      .filter(Boolean),
  );
  const missing = example.filter((line) => KEY.test(line) && !present.has(KEY.exec(line)[1]));
  if (missing.length > 0) {
    appendFileSync(".dev.vars", `\n${missing.map(withLocalSecrets).join("\n")}\n`);
    console.log(`Added to .dev.vars: ${missing.map((line) => KEY.exec(line)[1]).join(", ")}`);
  }
}

// CI=1 stops wrangler from asking for confirmation before it applies migrations. Its table (one
// row per migration, printed twice) is shown only when it fails; otherwise one summary line.
const migrate = spawnSync("wrangler", ["d1", "migrations", "apply", "DB", "--local"], {
  encoding: "utf8",
  env: { ...process.env, CI: "1", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
});
if (migrate.status !== 0) {
  process.stdout.write(migrate.stdout ?? "");
  process.stderr.write(migrate.stderr ?? "");
  console.error(`Applying the D1 migrations failed (wrangler d1 migrations apply DB --local, exit ${migrate.status ?? migrate.signal}).`);
  process.exit(migrate.status ?? 1);
}
console.log(migrationSummary(migrate.stdout, readdirSync("migrations").filter((name) => name.endsWith(".sql")).length));

// The starter reference data (taxonomies, categories, materials, product types): idempotent, so
// it runs on every start and only fills in what is missing.
try {
  const counts = await seedStarter();
  console.log(
    `Starter data in place: ${counts.categories} categories, ${counts.materials} materials, ${counts.product_types} product types.`,
  );
} catch (error) {
  console.error(`Seeding the starter data failed: ${error?.message ?? error}`);
  process.exit(1);
}

/** One line for wrangler's output: which migrations it applied now (✅ rows), or that none were due. */
function migrationSummary(output, total) {
  const applied = [...new Set([...output.matchAll(/│\s*(\S+\.sql)\s*│\s*✅/g)].map((match) => match[1]))];
  if (applied.length === 0) return `Local D1 database up to date (${total} migrations).`;
  const names = applied.length <= 2 ? applied.join(", ") : `${applied[0]} … ${applied.at(-1)}`;
  return `Local D1 database: applied ${applied.length} of ${total} migrations (${names}).`;
}
