import type { SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { materials } from "../../src/db/schema";
import { facetStatement, productListStatements, suggestionStatements } from "../../src/services/products/query";
import { nameContains, recordTable } from "../../src/services/reference/records";

// D1 refuses LIKE and GLOB patterns over 50 bytes (SQLITE_LIMIT_LIKE_PATTERN_LENGTH) and local
// workerd only when a row is compared, so this checks the statements themselves: no parameter a
// text filter binds may reach a LIKE or GLOB with more than 50 bytes, whatever the filter holds.

const dialect = new SQLiteAsyncDialect();
const D1_LIKE_PATTERN_BYTES = 50;

/** Byte lengths of the parameters bound as the right side of a LIKE or GLOB in `query`. */
function patternBytes(query: SQL): number[] {
  const { sql: text, params } = dialect.sqlToQuery(query);
  const before = text.split("?").slice(0, -1);
  return before.flatMap((head, i) => (/\b(LIKE|GLOB)\s*$/i.test(head) ? [new TextEncoder().encode(String(params[i])).byteLength] : []));
}

const longest = "🔧".repeat(100);
const page = { page: 1, size: 10 };

describe("text filters bind no LIKE pattern D1 would refuse", () => {
  it("on the product list, its facets and the suggestions", () => {
    const statements = [
      ...productListStatements({ nameIlike: longest, modelIlike: longest }, null, page),
      facetStatement({ nameIlike: longest }, ["brand", "model"]),
      ...suggestionStatements("brands", longest, page),
      ...suggestionStatements("models", longest, page),
    ];
    for (const statement of statements) {
      for (const bytes of patternBytes(statement)) expect(bytes).toBeLessThanOrEqual(D1_LIKE_PATTERN_BYTES);
      // The text travels in the statement's one JSON parameter (src/services/products/query.ts, `Args`).
      expect(JSON.stringify(dialect.sqlToQuery(statement).params)).toContain(longest);
    }
  });

  it("on the reference-data lists", () => {
    const condition = nameContains(recordTable(materials, "m", ["id", "name"]), longest);
    for (const bytes of patternBytes(condition)) expect(bytes).toBeLessThanOrEqual(D1_LIKE_PATTERN_BYTES);
    expect(dialect.sqlToQuery(condition).params).toEqual([longest]);
  });
});
