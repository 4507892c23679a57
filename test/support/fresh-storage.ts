import { reset } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { forgetRecentReads } from "../../src/middleware/read-copies";
import { forgetLimitLeases } from "../../src/rate-limits/client";
import { beginTestFile } from "./test-file";

const migrationsTable = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'd1_migrations'").first<{ n: number }>())
    ?.n ?? 0;

/** All migrations in one batch (one round trip, one transaction), recorded in d1_migrations as `wrangler d1 migrations apply` records them. */
export async function migrate(db: D1Database): Promise<void> {
  const statements = [
    `CREATE TABLE d1_migrations (
       id INTEGER PRIMARY KEY AUTOINCREMENT,
       name TEXT UNIQUE,
       applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
     )`,
    ...env.TEST_MIGRATIONS.flatMap((migration) => migration.queries),
  ].map((query) => db.prepare(query));
  const recorded = env.TEST_MIGRATIONS.map((migration) => db.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(migration.name));
  await db.batch([...statements, ...recorded]);
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * What the migrations made, as the statements that make it again: every table, then the rows the
 * migrations wrote (through SQLite's `quote()`, exact for every type) and the AUTOINCREMENT
 * counters, then indexes, views and triggers (after the rows, so that no trigger fires twice).
 * Full-text indexes make their own shadow tables. The migrations rebuild tables and re-create
 * indexes as the schema grew; the end state alone is a third of the work, and the suite makes it
 * once per test file.
 */
export async function imageOf(db: D1Database): Promise<string[]> {
  const [master, kinds] = await db.batch<{ type: string; name: string; sql: string; kind?: string }>([
    db.prepare(
      "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY rowid",
    ),
    db.prepare("SELECT name, type AS kind FROM pragma_table_list WHERE schema = 'main'"),
  ]);
  const kindOf = new Map((kinds!.results ?? []).map((row) => [row.name, row.kind]));
  const entries = (master!.results ?? []).filter((entry) => kindOf.get(entry.name) !== "shadow");
  const tables = entries.filter((entry) => entry.type === "table" && kindOf.get(entry.name) === "table").map((entry) => entry.name);
  const columns = await db.batch<{ name: string }>(tables.map((table) => db.prepare("SELECT name FROM pragma_table_info(?)").bind(table)));
  const rows = await db.batch<{ statement: string }>([
    ...tables.map((table, i) => {
      const names = (columns[i]!.results ?? []).map((column) => column.name);
      const values = names.map((name) => `quote(${quoted(name)})`).join(` || ', ' || `);
      return db.prepare(
        `SELECT 'INSERT INTO ${quoted(table).replaceAll("'", "''")} (${names.map(quoted).join(", ").replaceAll("'", "''")}) VALUES (' || ${values} || ')' AS statement FROM ${quoted(table)} ORDER BY rowid`,
      );
    }),
    db.prepare(
      "SELECT 'INSERT INTO sqlite_sequence (name, seq) VALUES (' || quote(name) || ', ' || quote(seq) || ')' AS statement FROM sqlite_sequence",
    ),
  ]);
  const inserts = rows.slice(0, -1).flatMap((result) => (result.results ?? []).map((row) => row.statement));
  // The rows' own ids moved the counters already; they are set to what the migrations left.
  const counters = (rows.at(-1)!.results ?? []).map((row) => row.statement);
  return [
    ...entries.filter((entry) => entry.type === "table").map((entry) => entry.sql),
    ...inserts,
    ...(counters.length ? ["DELETE FROM sqlite_sequence", ...counters] : []),
    ...entries.filter((entry) => entry.type !== "table").map((entry) => entry.sql),
  ];
}

/** Makes a database of `image` in an empty one, in one batch. */
export async function replay(db: D1Database, image: readonly string[]): Promise<void> {
  await db.batch(image.map((statement) => db.prepare(statement)));
}

// Made by the first file of the runtime, from the migrations; every later file replays it.
let image: string[] | undefined;

/**
 * Wipes every binding's storage (D1, KV, R2, Durable Objects) and gives the empty database the
 * migrated schema: the storage a runtime of its own would give a test file. The workers projects
 * run it before each file (test/setup/fresh-storage.ts), since files share one runtime.
 *
 * Work the previous file left running (a deferred write, an alarm) can reach the database while
 * it is wiped and bring its tables back; the wipe is then repeated once that work has ended.
 */
export async function freshStorage(): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    await reset();
    if ((await migrationsTable()) === 0) break;
    if (attempt === 5) throw new Error("the previous test file's database survived six wipes");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // What the isolate keeps in memory about that storage goes with it: cached reads (their ids and
  // generations would otherwise meet another file's) and rate-limit units taken ahead.
  forgetRecentReads();
  forgetLimitLeases();
  beginTestFile();

  if (image) {
    await replay(env.DB, image);
    return;
  }
  await migrate(env.DB);
  image = await imageOf(env.DB);
}
