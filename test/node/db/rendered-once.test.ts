import { eq, type Placeholder, sql } from "drizzle-orm";
import { QueryBuilder, SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { RenderedSql, renderedOnce } from "../../../src/db/client.ts";
import { products } from "../../../src/db/schema.ts";

const builder = new QueryBuilder();
const dialect = new SQLiteAsyncDialect();

/** Two statements of the kinds a read batch holds: a builder select and hand-written SQL. */
function statements(id: number | Placeholder, name: string | Placeholder) {
  return [
    builder.select({ id: products.id, name: products.name }).from(products).where(eq(products.id, id)).getSQL(),
    sql`SELECT count(*) AS n FROM products p WHERE p.parent_id = ${id} AND p.name <> ${name} AND p.depth < ${3}`,
  ];
}

describe("renderedOnce", () => {
  it("gives the text and parameters that building the statements with the values gives", () => {
    const rendered = renderedOnce<{ id: number; name: string }>((p) => statements(p.id, p.name));
    for (const [id, name] of [
      [7, "Kettle"],
      [123_456, "it's"],
    ] as const) {
      const direct = statements(id, name).map((q) => dialect.sqlToQuery(q));
      const bound = rendered({ id, name });
      expect(bound.every((q) => q instanceof RenderedSql)).toBe(true);
      expect(bound.map((q) => ({ sql: q.sql, params: q.params }))).toEqual(direct.map((q) => ({ sql: q.sql, params: q.params })));
    }
  });

  it("builds once, and binds each call's values apart", () => {
    let builds = 0;
    const rendered = renderedOnce<{ id: number; name: string }>((p) => {
      builds++;
      return statements(p.id, p.name);
    });
    expect(builds).toBe(0);
    const first = rendered({ id: 1, name: "a" });
    const second = rendered({ id: 2, name: "b" });
    expect(builds).toBe(1);
    expect(first[1]!.params).toEqual([1, "a", 3]);
    expect(second[1]!.params).toEqual([2, "b", 3]);
    expect(first[0]!.sql).toBe(second[0]!.sql);
  });

  it("refuses a call that lacks a value its statements name", () => {
    const rendered = renderedOnce<{ id: number; name: string }>((p) => statements(p.id, p.name));
    expect(() => rendered({ id: 1 } as { id: number; name: string })).toThrow(/name/);
  });
});
