// Sets up what the production environment needs in the Cloudflare account and is missing, then
// lists the secrets still to set. Changes nothing that exists: run it again and it says "Nothing
// to do". README, Deploy; docs/operations.md.
//
//   npm run setup:production [-- --env production] [--dry-run]
//
// - the D1 database (by its database_name in wrangler.jsonc: `npm run deploy` applies the
//   migrations before the Worker goes up, so the database must exist before the first deploy),
// - the R2 bucket,
// - every queue the Worker produces to or consumes from, dead-letter queues included (wrangler's
//   deploy provisions D1, KV and R2 bindings that have no id, but never queues),
// - the KV namespace is left to the first `npm run deploy`: a KV binding has no name to find an
//   existing namespace by, so wrangler creates it (`<worker>-kv`) and later deploys inherit it,
// - the secrets: those .dev.vars.example lists under "secrets" that the deployed Worker lacks,
//   each with the command that sets it.
//
// It acts through wrangler, so it uses whatever credentials wrangler has (`wrangler login`, or
// CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID), and reaches the API wrangler reaches
// (CLOUDFLARE_API_BASE_URL, which the test sets to a local fake). It never reads or prints a
// secret's value.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { unstable_readConfig } from "wrangler";
import { jsonOutput, ROOT, runWrangler, wrangler } from "./lib/wrangler.mjs";

/** Secrets the Worker refuses to run without, or that production needs to send mail. */
export const REQUIRED_SECRETS = {
  AUTH_TOKEN_SECRET: "openssl rand -hex 32 | npx wrangler secret put AUTH_TOKEN_SECRET",
  DATA_ENCRYPTION_KEY: "openssl rand -hex 32 | npx wrangler secret put DATA_ENCRYPTION_KEY   # keep a copy in your secret store",
  BOOTSTRAP_SUPERUSER_EMAIL: "npx wrangler secret put BOOTSTRAP_SUPERUSER_EMAIL",
  BOOTSTRAP_SUPERUSER_PASSWORD: "npx wrangler secret put BOOTSTRAP_SUPERUSER_PASSWORD",
  EMAIL_PROVIDER_API_KEY: "npx wrangler secret put EMAIL_PROVIDER_API_KEY",
};

const { values } = parseArgs({
  options: {
    env: { type: "string", default: "production" },
    "dry-run": { type: "boolean", default: false },
  },
});
const envName = values.env;
const dryRun = values["dry-run"];
const config = unstable_readConfig({ config: path.join(ROOT, "wrangler.jsonc"), env: envName }, {});
const worker = config.name;
const envArgs = ["--env", envName];

/** The secret names .dev.vars.example lists after its "--- secrets" heading. */
function secretNames() {
  const lines = readFileSync(path.join(ROOT, ".dev.vars.example"), "utf8").split("\n");
  const start = lines.findIndex((line) => /^#\s*---\s*secrets\b/.test(line));
  return lines
    .slice(start + 1)
    .map((line) => /^([A-Z0-9_]+)=/.exec(line)?.[1])
    .filter(Boolean);
}

function queueNames() {
  const names = new Set();
  for (const producer of config.queues?.producers ?? []) names.add(producer.queue);
  for (const consumer of config.queues?.consumers ?? []) {
    names.add(consumer.queue);
    if (consumer.dead_letter_queue) names.add(consumer.dead_letter_queue);
  }
  return [...names];
}

// What the account has, read in parallel (five wrangler runs, each a list call).
const [d1List, r2List, queueList, kvList, secretList] = await Promise.all([
  wrangler(["d1", "list", "--json"]),
  wrangler(["r2", "bucket", "list"]),
  wrangler(["queues", "list"]),
  wrangler(["kv", "namespace", "list"]),
  runWrangler(["secret", "list", ...envArgs, "--format", "json"]),
]);
const databases = jsonOutput(d1List);
// `r2 bucket list` prints "name: <bucket>" blocks; `queues list` a table with a name column.
const buckets = new Set([...r2List.stdout.matchAll(/^name:\s+(\S+)\s*$/gm)].map((m) => m[1]));
const queueCell = (name) => new RegExp(`[│|]\\s*${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*[│|]`);
const namespaces = jsonOutput(kvList);
let deployedSecrets = null;
if (secretList.code === 0) deployedSecrets = new Set(jsonOutput(secretList).map((secret) => secret.name));
else if (!/not found/i.test(`${secretList.stdout}${secretList.stderr}`)) {
  throw new Error(`wrangler secret list failed:\n${secretList.stdout}\n${secretList.stderr}`);
}

const lines = [];
const todo = [];
const creations = [];
const report = (what, state) => lines.push(`  ${what.padEnd(44, " ")} ${state}`);
// Creations run together once everything is known; each line says what became of its resource.
const create = (what, args) => {
  todo.push(what);
  const line = lines.push("") - 1;
  const set = (state) => (lines[line] = `  ${what.padEnd(44, " ")} ${state}`);
  if (dryRun) set("missing: would be created (dry run)");
  else creations.push(wrangler(args).then(() => set("created")));
};

for (const database of config.d1_databases ?? []) {
  const what = `D1 database ${database.database_name}`;
  if (database.database_id) {
    const found = databases.some((db) => db.uuid === database.database_id);
    if (!found) throw new Error(`wrangler.jsonc names D1 database id ${database.database_id}, which the account does not have`);
    report(what, "exists");
  } else if (databases.some((db) => db.name === database.database_name)) report(what, "exists");
  else create(what, ["d1", "create", database.database_name, "--update-config=false"]);
}
for (const bucket of config.r2_buckets ?? []) {
  const what = `R2 bucket ${bucket.bucket_name}`;
  if (buckets.has(bucket.bucket_name)) report(what, "exists");
  else create(what, ["r2", "bucket", "create", bucket.bucket_name, "--update-config=false"]);
}
for (const name of queueNames()) {
  const what = `Queue ${name}`;
  if (queueCell(name).test(queueList.stdout)) report(what, "exists");
  else create(what, ["queues", "create", name]);
}
for (const kv of config.kv_namespaces ?? []) {
  const what = `KV namespace (binding ${kv.binding})`;
  if (kv.id) {
    if (!namespaces.some((ns) => ns.id === kv.id))
      throw new Error(`wrangler.jsonc names KV namespace id ${kv.id}, which the account does not have`);
    report(what, "exists");
  } else if (deployedSecrets !== null) report(what, "the deployed Worker's (each deploy keeps it)");
  else {
    const title = `${worker}-${kv.binding.toLowerCase().replaceAll("_", "-")}`;
    const leftover = namespaces.some((ns) => ns.title === title);
    report(
      what,
      leftover
        ? `a namespace "${title}" exists from an earlier attempt: run the first \`npm run deploy\` in a terminal and connect it, or delete it`
        : `the first \`npm run deploy\` creates it ("${title}")`,
    );
  }
}

await Promise.all(creations);

const all = secretNames();
const missingRequired = Object.keys(REQUIRED_SECRETS).filter((name) => !deployedSecrets?.has(name));
const missingOptional = all.filter((name) => !(name in REQUIRED_SECRETS) && !deployedSecrets?.has(name));

console.log(`Cloudflare resources of the "${envName}" environment (Worker ${worker}):`);
console.log(lines.join("\n"));
if (missingRequired.length > 0) {
  console.log(`\nSecrets to set (required${deployedSecrets === null ? "; the Worker is not deployed yet" : ""}):`);
  for (const name of missingRequired) console.log(`  ${REQUIRED_SECRETS[name].replace(`put ${name}`, `put ${name} --env ${envName}`)}`);
}
if (missingOptional.length > 0) {
  console.log(
    `\nOptional secrets not set (only for the features that use them; .dev.vars.example says which): ${missingOptional.join(", ")}`,
  );
}
if (todo.length === 0 && missingRequired.length === 0) {
  console.log("\nNothing to do: every resource exists and every required secret is set. Deploy with `npm run deploy`.");
} else if (missingRequired.length === 0) {
  console.log(`\n${dryRun ? "Would create" : "Created"} ${todo.length}. Next: \`npm run deploy\`.`);
} else {
  console.log(`\n${dryRun ? "Would create" : "Created"} ${todo.length}. Next: set the secrets above, then \`npm run deploy\`.`);
}
