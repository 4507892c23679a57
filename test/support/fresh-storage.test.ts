import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { imageOf, migrate, replay } from "./fresh-storage";

const blobsAsHex = (_key: string, value: unknown) =>
  value instanceof ArrayBuffer || ArrayBuffer.isView(value)
    ? Array.from(new Uint8Array(value instanceof ArrayBuffer ? value : value.buffer), (byte) => byte.toString(16).padStart(2, "0")).join("")
    : value;

/** Everything a database holds: its schema entries and the rows of every table, shadow tables and counters included. */
async function dump(db: D1Database) {
  const master = await db
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY type, name")
    .all<{ type: string; name: string; sql: string | null }>();
  const tables = master.results
    .filter((entry) => entry.type === "table" && !/^sqlite_(?!sequence)/.test(entry.name))
    .map((entry) => entry.name);
  // Some shadow tables have no rowid: rows are compared in the order of their text.
  const contents = await db.batch(tables.map((table) => db.prepare(`SELECT * FROM "${table}"`)));
  const sorted = (rows: unknown[]) => rows.map((row) => JSON.stringify(row, blobsAsHex)).sort();
  return { schema: master.results, rows: Object.fromEntries(tables.map((table, i) => [table, sorted(contents[i]!.results)])) };
}

// The test files start from a replay of the migrated database (test/support/fresh-storage.ts):
// it must be that database, entry for entry and row for row.
describe("the image of the migrated database that each test file starts from", () => {
  it("makes the database the migrations make", async () => {
    await migrate(env.RESTORE_DB);
    const image = await imageOf(env.RESTORE_DB);
    await replay(env.RESTORE_DB_2, image);
    const [migrated, replayed] = [await dump(env.RESTORE_DB), await dump(env.RESTORE_DB_2)];
    expect(replayed.schema).toEqual(migrated.schema);
    expect(replayed.rows).toEqual(migrated.rows);
    // Not an empty comparison: the migrations write rows (units, the system account, counters).
    expect(Object.values(migrated.rows).flat().length).toBeGreaterThan(20);
    expect(migrated.schema.filter((entry) => entry.type === "trigger").length).toBeGreaterThan(50);
  });
});
