import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { batchRows, bookmarkOf, carryInNextBatch, countRoundTrips, createDb, flushCarried } from "../../src/db/client";
import { units } from "../../src/db/schema";

describe("round-trip counting", () => {
  it("counts each statement execution once", async () => {
    const { d1, counter } = countRoundTrips(env.DB);
    await d1.prepare("SELECT 1").first();
    await d1.prepare("SELECT ?1").bind(2).all();
    await d1.prepare("SELECT 1").raw();
    await d1.prepare("SELECT 1").run();
    await d1.exec("SELECT 1");
    expect(counter.count).toBe(5);
  });

  it("counts a batch as one, whatever it carries", async () => {
    const { d1, counter } = countRoundTrips(env.DB);
    const results = await d1.batch([d1.prepare("SELECT 1 AS a"), d1.prepare("SELECT ?1 AS b").bind(2), d1.prepare("SELECT 3 AS c")]);
    expect(results.map((r) => r.results[0])).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
    expect(counter.count).toBe(1);
  });

  it("counts drizzle queries and drizzle batches the same way", async () => {
    const { db, roundTrips } = createDb(env.DB);
    const rows = await db.select().from(units);
    expect(rows).toHaveLength(4);
    await db.batch([db.select().from(units), db.run(sql`SELECT 1`)]);
    expect(roundTrips.count).toBe(2);
  });

  it("sums D1's meta over the statements: rows read and written, database time; raw() and exec() as unmetered", async () => {
    const { d1, counter } = countRoundTrips(env.DB);
    // The four units, read whole: SQLite reports each row it stepped through.
    await d1.prepare("SELECT * FROM units").all();
    expect(counter).toMatchObject({ count: 1, rowsRead: 4, rowsWritten: 0, unmetered: 0 });
    await d1.batch([d1.prepare("SELECT * FROM units WHERE code = 'kg'"), d1.prepare("SELECT count(*) FROM units")]);
    expect(counter.rowsRead).toBeGreaterThan(4);
    const first = await d1.prepare("SELECT code FROM units ORDER BY code").first<string>("code");
    expect(first).toBe("cm");
    await d1.prepare("SELECT 1").raw();
    await d1.exec("SELECT 1");
    expect(counter).toMatchObject({ count: 5, unmetered: 2 });
    expect(counter.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("does not count statements that are only prepared", () => {
    const { d1, counter } = countRoundTrips(env.DB);
    d1.prepare("SELECT 1").bind();
    expect(counter.count).toBe(0);
  });
});

describe("sessions and carried queries", () => {
  it("runs in a D1 session and reports its bookmark once it has read", async () => {
    const { db, roundTrips } = createDb(env.DB, "first-unconstrained");
    expect(bookmarkOf(db)).toBeNull();
    await db.all(sql`SELECT 1`);
    expect(bookmarkOf(db)).toMatch(/^[0-9a-f-]+$/);
    expect(roundTrips.count).toBe(1);
  });

  it("carries queries at the front of the next batch, in the same round trip, settled before the batch's caller sees its rows", async () => {
    const { db, roundTrips } = createDb(env.DB);
    const seen: unknown[][][] = [];
    carryInNextBatch(db, [sql`SELECT 1 AS carried`, sql`SELECT 2 AS also`], (rows) => seen.push(rows));
    const [own] = await batchRows<[{ own: number }]>(db, [sql`SELECT 3 AS own`]);
    expect(seen).toEqual([[[{ carried: 1 }], [{ also: 2 }]]]);
    expect(own).toEqual([{ own: 3 }]);
    expect(roundTrips.count).toBe(1);
    // Carried once: the next batch goes alone.
    await batchRows(db, [sql`SELECT 4`]);
    expect(seen).toHaveLength(1);
    expect(roundTrips.count).toBe(2);
  });

  it("sends carried queries on their own before a query made outside a batch, and on a flush", async () => {
    const { db, roundTrips } = createDb(env.DB);
    let settled = 0;
    carryInNextBatch(db, [sql`SELECT 1`], () => settled++);
    await db.all(sql`SELECT 2`);
    expect([settled, roundTrips.count]).toEqual([1, 2]);
    carryInNextBatch(db, [sql`SELECT 1`], () => settled++);
    await flushCarried(db);
    await flushCarried(db);
    expect([settled, roundTrips.count]).toEqual([2, 3]);
  });

  it("hands the batch's caller the error a settle throws", async () => {
    const { db } = createDb(env.DB);
    carryInNextBatch(db, [sql`SELECT 1`], () => {
      throw new Error("refused");
    });
    await expect(batchRows(db, [sql`SELECT 2`])).rejects.toThrow("refused");
  });
});
