import { reset } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { forgetRecentReads } from "../../src/middleware/read-copies";
import { forgetLimitLeases } from "../../src/rate-limits/client";
import { beginTestFile } from "../support/test-file";

// Runs before each test file. Files of a project share one runtime (vitest.config.ts), so each
// starts by wiping every binding's storage (D1, KV, R2, Durable Objects) and migrating the empty
// database: a file sees the storage a runtime of its own would give it.
//
// Work the previous file left running (a deferred write, an alarm) can reach the database while
// it is wiped and bring its tables back; the wipe is then repeated once that work has ended.
const tables = async () =>
  (await env.DB.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'd1_migrations'").first<{ n: number }>())
    ?.n ?? 0;
for (let attempt = 0; ; attempt++) {
  await reset();
  if ((await tables()) === 0) break;
  if (attempt === 5) throw new Error("the previous test file's database survived six wipes");
  await new Promise((resolve) => setTimeout(resolve, 200));
}
// What the isolate keeps in memory about that storage goes with it: cached reads (their ids and
// generations would otherwise meet another file's) and rate-limit units taken ahead.
forgetRecentReads();
forgetLimitLeases();
beginTestFile();

// All migrations in one batch (one round trip, one transaction), recorded in d1_migrations as
// `wrangler d1 migrations apply` and applyD1Migrations() record them.
const statements = [
  `CREATE TABLE d1_migrations (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     name TEXT UNIQUE,
     applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
   )`,
  ...env.TEST_MIGRATIONS.flatMap((migration) => migration.queries),
].map((query) => env.DB.prepare(query));
const recorded = env.TEST_MIGRATIONS.map((migration) => env.DB.prepare("INSERT INTO d1_migrations (name) VALUES (?)").bind(migration.name));
await env.DB.batch([...statements, ...recorded]);
