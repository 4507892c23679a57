import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { openLocalState } from "../../scripts/lib/local-d1.mjs";

// `npm run restore` itself, on a backup folder made here in the format src/services/operations/backup.ts
// writes (two gzip members in one file, a self-referencing table, AUTOINCREMENT, a trigger and an
// external-content full-text index over some of its content's rows), into a local state folder. The Worker's side of the drill
// (the backup, and the same restore code in workerd) is test/services/backup.test.ts.

const ROOT = path.resolve(import.meta.dirname, "../..");
const work = mkdtempSync(path.join(os.tmpdir(), "relab-restore-cli-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

function backupFolder(name: string, tamper = false): string {
  const schema = [
    {
      type: "table",
      name: "parts",
      tbl_name: "parts",
      sql: "CREATE TABLE parts (id integer PRIMARY KEY AUTOINCREMENT, parent_id integer REFERENCES parts(id), name text NOT NULL, weight real)",
    },
    { type: "table", name: "sqlite_sequence", tbl_name: "sqlite_sequence", sql: "CREATE TABLE sqlite_sequence(name,seq)" },
    { type: "table", name: "log", tbl_name: "log", sql: "CREATE TABLE log (part_id integer, note text)" },
    {
      type: "table",
      name: "parts_fts",
      tbl_name: "parts_fts",
      sql: "CREATE VIRTUAL TABLE parts_fts USING fts5(name, content='parts', content_rowid='id')",
    },
    {
      type: "table",
      name: "parts_fts_data",
      tbl_name: "parts_fts_data",
      sql: "CREATE TABLE 'parts_fts_data'(id INTEGER PRIMARY KEY, block BLOB)",
    },
    {
      type: "table",
      name: "parts_fts_docsize",
      tbl_name: "parts_fts_docsize",
      sql: "CREATE TABLE 'parts_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB)",
    },
    { type: "index", name: "parts_parent_idx", tbl_name: "parts", sql: "CREATE INDEX parts_parent_idx ON parts (parent_id)" },
    {
      type: "trigger",
      name: "parts_logged",
      tbl_name: "parts",
      sql: "CREATE TRIGGER parts_logged AFTER INSERT ON parts BEGIN INSERT INTO log VALUES (new.id, 'added; by trigger'); END",
    },
  ];
  // A child before its parent, text with quotes, semicolons and a line break, and an exact real.
  const members = [
    `INSERT INTO "parts"("id","parent_id","name","weight") VALUES(2,1,'Lid; with a ''quote''\nand a line',3.000000000000000445e-01);\n`,
    `INSERT INTO "parts"("id","parent_id","name","weight") VALUES(1,NULL,'Kettle',1250.5),(3,NULL,'Toaster',NULL);\n`,
  ].map((text) => gzipSync(text));
  const parts = Buffer.concat(members);
  const sequence = gzipSync(`INSERT INTO "sqlite_sequence"(rowid,"name","seq") VALUES(1,'parts',40);\n`);
  const log = gzipSync(`INSERT INTO "log"(rowid,"part_id","note") VALUES(7,1,'kept as it was');\n`);
  // The index holds the parts without a parent only: 1 and 3, not the lid.
  const fts = gzipSync(`INSERT INTO "parts_fts"(rowid,"name") SELECT "id","name" FROM "parts" WHERE "id" IN (1,3);\n`);
  const entry = (table: string, bytes: Buffer, rows: number, memberLengths: number[]) => ({
    name: table,
    columns: [],
    rowid: table !== "parts",
    file: `${table}.sql.gz`,
    rows,
    bytes: bytes.length,
    sha256: sha256(bytes),
    members: memberLengths,
  });
  const manifest = {
    format: "relab-d1-backup/2",
    id: "20260501T031700Z",
    started_at: "2026-05-01T03:17:00.000Z",
    finished_at: "2026-05-01T03:17:05.000Z",
    read_generations: null,
    schema,
    shadow: ["parts_fts_data", "parts_fts_docsize"],
    indexes: [
      {
        ...entry("parts_fts", fts, 2, [fts.length]),
        columns: ["name"],
        content: "parts",
        content_rowid: "id",
        source: "parts_fts_docsize",
      },
    ],
    tables: [
      entry(
        "parts",
        parts,
        3,
        members.map((m) => m.length),
      ),
      entry("log", log, 1, [log.length]),
      entry("sqlite_sequence", sequence, 1, [sequence.length]),
    ],
  };
  const dir = mkdtempSync(`${path.join(work, name)}-`);
  writeFileSync(path.join(dir, "manifest.json"), JSON.stringify(manifest));
  writeFileSync(path.join(dir, "parts.sql.gz"), tamper ? Buffer.concat([parts.subarray(0, -1), Buffer.from([parts.at(-1)! ^ 1])]) : parts);
  writeFileSync(path.join(dir, "log.sql.gz"), log);
  writeFileSync(path.join(dir, "sqlite_sequence.sql.gz"), sequence);
  writeFileSync(path.join(dir, "parts_fts.sql.gz"), fts);
  return dir;
}

function restore(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, "scripts/restore.mjs"), ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (out += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

describe("npm run restore", () => {
  it("loads a backup folder into an empty local database, checks it, and refuses a database that is not empty", async () => {
    const state = path.join(work, "state");
    const first = await restore([backupFolder("good"), "--persist-to", state]);
    expect(first.code, first.out).toBe(0);
    expect(first.out).toContain("every count as in the manifest");

    const db = await openLocalState(state);
    try {
      const parts = await db.all("SELECT id, parent_id, name, quote(weight) AS weight FROM parts ORDER BY id");
      expect(parts).toEqual([
        { id: 1, parent_id: null, name: "Kettle", weight: "1250.5" },
        { id: 2, parent_id: 1, name: "Lid; with a 'quote'\nand a line", weight: "3.000000000000000445e-01" },
        { id: 3, parent_id: null, name: "Toaster", weight: "NULL" },
      ]);
      // The trigger came after the rows (no log line of its own), the counter as backed up, the
      // index holding the rows it held (a rebuild would add the lid, and find it by 'quote').
      expect(await db.all("SELECT rowid, part_id, note FROM log")).toEqual([{ rowid: 7, part_id: 1, note: "kept as it was" }]);
      expect(await db.all("SELECT seq FROM sqlite_sequence WHERE name = 'parts'")).toEqual([{ seq: 40 }]);
      expect(await db.all("SELECT rowid FROM parts_fts WHERE parts_fts MATCH 'kettle OR toaster' ORDER BY rowid")).toEqual([
        { rowid: 1 },
        { rowid: 3 },
      ]);
      expect(await db.all("SELECT rowid FROM parts_fts WHERE parts_fts MATCH 'quote'")).toEqual([]);
      expect(await db.all("SELECT id FROM parts_fts_docsize ORDER BY id")).toEqual([{ id: 1 }, { id: 3 }]);
      await db.all("INSERT INTO parts (name) VALUES ('Radio')");
      expect(await db.all("SELECT id FROM parts WHERE name = 'Radio'")).toEqual([{ id: 41 }]);
      expect(await db.all("SELECT count(*) AS n FROM log")).toEqual([{ n: 2 }]);
    } finally {
      await db.dispose();
    }

    const again = await restore([backupFolder("good"), "--persist-to", state]);
    expect(again.code).toBe(1);
    expect(again.out).toContain("the target database is not empty");
  });

  it("refuses a file that does not match its manifest before loading anything", async () => {
    const state = path.join(work, "state-tampered");
    const run = await restore([backupFolder("tampered", true), "--persist-to", state]);
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/parts\.sql\.gz: SHA-256 [0-9a-f]{64}, the manifest says/);
    expect(run.out).not.toContain("Loading");
  });
});
