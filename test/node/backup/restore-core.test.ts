import { describe, expect, it } from "vitest";
import {
  countQuery,
  fillPrefix,
  type Manifest,
  parseManifest,
  restorePlan,
  restoreStatements,
} from "../../../scripts/backup/restore-core.mjs";
import { fillStatements, type PlannedIndex, fillPrefix as writtenPrefix } from "../../../src/services/operations/backup-plan";

// The restore's reading of full-text indexes (scripts/backup/restore-core.mjs) against what the
// backup writes (src/services/operations/backup-plan.ts). The whole drill, through D1, is
// test/services/backup.test.ts.

const file = (name: string) => ({ name, file: `${name}.sql.gz`, rows: 2, bytes: 10, sha256: "0".repeat(64), members: [10] });
const planned: PlannedIndex = {
  name: 'idx "a"',
  columns: ["name", "note"],
  content: "parts",
  contentRowid: "id",
  source: 'idx "a"_docsize',
  cut: 9,
};

function manifest(overrides: Record<string, unknown> = {}): Manifest {
  return parseManifest(
    JSON.stringify({
      format: "relab-d1-backup/2",
      id: "20260501T031700Z",
      read_generations: null,
      schema: [
        { type: "table", name: "parts", tbl_name: "parts", sql: "CREATE TABLE parts (id integer PRIMARY KEY, name text, note text)" },
        {
          type: "table",
          name: planned.name,
          tbl_name: planned.name,
          sql: `CREATE VIRTUAL TABLE "idx ""a""" USING fts5(name, note, content=parts, content_rowid=id)`,
        },
        { type: "table", name: planned.source, tbl_name: planned.source, sql: "CREATE TABLE x(id INTEGER PRIMARY KEY, sz BLOB)" },
        { type: "trigger", name: "t", tbl_name: "parts", sql: "CREATE TRIGGER t AFTER INSERT ON parts BEGIN SELECT 1; END" },
      ],
      shadow: [planned.source],
      tables: [{ ...file("parts"), columns: ["id", "name", "note"], rowid: false }],
      indexes: [
        { ...file("idx"), name: planned.name, columns: planned.columns, content: "parts", content_rowid: "id", source: planned.source },
      ],
      ...overrides,
    }),
  );
}

describe("full-text indexes in a backup", () => {
  it("are written as the statements the restore expects: the same prefix, rowid lists under 30,000 characters", () => {
    const index = manifest().indexes[0]!;
    expect(writtenPrefix(planned)).toBe(fillPrefix(index));
    expect(fillPrefix(index)).toBe(`INSERT INTO "idx ""a"""(rowid,"name","note") SELECT "id","name","note" FROM "parts" WHERE "id" IN (`);
    const rowids = Array.from({ length: 9000 }, (_, i) => 1_000_000 + i * 3);
    const text = fillStatements(fillPrefix(index), rowids);
    const lines = text.trimEnd().split("\n");
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(30_000);
    const listed = lines.flatMap((line) => line.slice(fillPrefix(index).length, -2).split(",").map(Number));
    expect(listed).toEqual(rowids);
    expect(fillStatements("P(", [])).toBe("");
  });

  it("are filled last, after the rows, the schema and the triggers, by exactly their files' statements", () => {
    const m = manifest();
    const fill = `${fillPrefix(m.indexes[0]!)}1,-3,7);\n`;
    const texts = new Map([
      ["parts", `INSERT INTO "parts"("id","name","note") VALUES(1,'a',NULL),(7,'b;c',NULL);\n`],
      [planned.name, fill],
    ]);
    const statements = restoreStatements(restorePlan(m, texts));
    expect(statements.at(-1)).toBe(fill.trimEnd().slice(0, -1));
    expect(statements.at(-2)).toMatch(/^CREATE TRIGGER t /);
    expect(statements.filter((statement) => statement.includes("'rebuild'"))).toEqual([]);
    expect(countQuery(m)).toBe(
      `SELECT (SELECT count(*) FROM "parts") AS "parts", (SELECT count(*) FROM "idx ""a""_docsize") AS "idx ""a"""`,
    );
  });

  it("refuses an index file holding anything but its fill", () => {
    const m = manifest();
    const prefix = fillPrefix(m.indexes[0]!);
    for (const text of [
      `${prefix}1,2); DELETE FROM parts;\n`,
      `${prefix}1,2) OR 1=1;\n`,
      `${prefix.replace('"note"', '"name"')}1);\n`,
      `${prefix}1,'2');\n`,
    ]) {
      expect(
        () =>
          restorePlan(
            m,
            new Map([
              ["parts", ""],
              [planned.name, text],
            ]),
          ),
        text,
      ).toThrow(/idx\.sql\.gz: statement \d+ is not/);
    }
    expect(() => restorePlan(m, new Map([["parts", ""]]))).toThrow(/no data for full-text index/);
  });

  it("checks the manifest's index entries", () => {
    const entry = manifest().indexes[0]!;
    expect(() => manifest({ indexes: undefined })).toThrow(/lacks its indexes list/);
    expect(() => manifest({ indexes: [{ ...entry, source: "parts" }] })).toThrow(/full-text index .* is malformed/);
    expect(() => manifest({ indexes: [{ ...entry, columns: [] }] })).toThrow(/malformed/);
    expect(() => manifest({ indexes: [{ ...entry, name: "parts" }] })).toThrow(/malformed/);
    expect(() => manifest({ indexes: [{ ...entry, file: "../x.sql.gz" }] })).toThrow(/malformed/);
    expect(() => manifest({ format: "relab-d1-backup/3" })).toThrow(/neither relab-d1-backup\/2 nor relab-d1-backup\/1/);
  });

  it("of the format before are rebuilt from their content, as those backups were made to be", () => {
    const m = manifest({ format: "relab-d1-backup/1", indexes: undefined, rebuild: [planned.name] });
    expect(m.indexes).toEqual([]);
    const statements = restoreStatements(restorePlan(m, new Map([["parts", ""]])));
    expect(statements).toContain(`INSERT INTO "idx ""a"""("idx ""a""") VALUES('rebuild')`);
  });
});
