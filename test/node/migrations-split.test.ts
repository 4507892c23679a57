import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { unstable_splitSqlQuery } from "wrangler";

// Wrangler (and the test pool, through it) splits a migration into statements with a scanner that
// takes `BEGIN` and `CASE` after white space as the start of a block and ` END` as its end. A
// `CASE` written right after a bracket inside a trigger, with its `END` before a space, closes the
// trigger early: the statement is cut at the next `;` and the migration fails with "incomplete
// input". Every trigger must come out whole.
const MIGRATIONS = path.join(import.meta.dirname, "../../migrations");

describe("migrations as wrangler splits them", () => {
  const files = readdirSync(MIGRATIONS).filter((name) => name.endsWith(".sql"));
  it.each(files)("%s: every trigger is one statement", (file) => {
    const statements = unstable_splitSqlQuery(readFileSync(path.join(MIGRATIONS, file), "utf8")).map((s) => s.trim());
    for (const statement of statements) {
      expect(statement, file).not.toMatch(/^END$/i);
      if (/^CREATE TRIGGER/i.test(statement)) expect(statement.slice(-3).toUpperCase(), statement.slice(0, 80)).toBe("END");
    }
  });
});
