import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { countRoundTrips, createDb } from "../../src/db/client";
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

  it("does not count statements that are only prepared", () => {
    const { d1, counter } = countRoundTrips(env.DB);
    d1.prepare("SELECT 1").bind();
    expect(counter.count).toBe(0);
  });
});
