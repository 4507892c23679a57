import { reset } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createDb } from "../../src/db/client";
import { forgetRecentReads } from "../../src/middleware/read-copies";
import { forgetLimitLeases } from "../../src/rate-limits/client";
import { insertPrefix, insertStatements, makePlan, pageQuery } from "../../src/services/operations/backup-plan";
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

/**
 * What the migrations made, as the statements that make it again, read with the backup's own plan
 * (src/services/operations/backup-plan.ts: the schema in creation order, which tables are copied,
 * their rows as `quote()` literals): every table, then the rows the migrations wrote and the
 * AUTOINCREMENT counters, then indexes, views and triggers (after the rows, so that no trigger
 * fires twice). Full-text indexes make their own shadow tables. The migrations rebuild tables and
 * re-create indexes as the schema grew; the end state alone is a third of the work, and the suite
 * makes it once per test file.
 */
export async function imageOf(d1: D1Database): Promise<string[]> {
  const { db } = createDb(d1);
  const plan = await makePlan(db);
  if (plan.indexes.some((index) => index.cut !== null)) throw new Error("the migrations indexed documents: the image would lose them");
  const shadow = new Set(plan.shadow);
  const pages = await d1.batch<Record<string, unknown>>(
    plan.tables.map((table) => d1.prepare(pageQuery(table)).bind(0, table.cut ?? 0, 1e9)),
  );
  // One statement per row: a page's text is one statement per line, and a value may hold a newline.
  const rowsOf = (i: number) => {
    const table = plan.tables[i]!;
    const prefix = insertPrefix(table);
    return (pages[i]!.results ?? []).map((row) => {
      const [rowid, values] = Object.values(row) as [number, string];
      return insertStatements(table, prefix, [[rowid, values]]).replace(/;\n$/, "");
    });
  };
  const counters = plan.tables.findIndex((table) => table.name === "sqlite_sequence");
  return [
    ...plan.schema
      .filter((entry) => entry.type === "table" && entry.sql && entry.name !== "sqlite_sequence" && !shadow.has(entry.name))
      .map((entry) => entry.sql!),
    ...plan.tables.flatMap((_, i) => (i === counters ? [] : rowsOf(i))),
    // The rows' own ids moved the counters already; they are set to what the migrations left.
    ...(counters >= 0 ? ["DELETE FROM sqlite_sequence", ...rowsOf(counters)] : []),
    ...plan.schema.filter((entry) => entry.type !== "table" && entry.sql).map((entry) => entry.sql!),
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
