import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import initSqlJs, { type Database, type SqlJsStatic, type Statement } from "sql.js";
import { beforeAll, describe, expect, it } from "vitest";
import { demoStatements } from "../../../scripts/seed/demo-data.mjs";
import {
  checkColumn,
  evaluateQuality,
  QUALITY_CHECK_CODES,
  type QualityInputs,
  type QualityStatus,
} from "../../../src/lib/record-quality.ts";

// The quality checks are written twice: as TypeScript rules (the details of GET .../quality) and
// as generated SQL columns (the stored statuses and scores every list, statistic and release
// reads), fed by counts that triggers keep (migration 0023). These properties hold the two to the
// same answers in SQLite, run through the project's own migrations: the columns against the rules
// on arbitrary and boundary inputs; the triggers' counts against a recount after arbitrary writes;
// and the migration's backfill against the triggers on the demo dataset.

const MIGRATIONS = path.join(import.meta.dirname, "../../../migrations");
const FILES = readdirSync(MIGRATIONS)
  .filter((name) => name.endsWith(".sql"))
  .sort();

let SQL: SqlJsStatic;
/** The image of a database with every migration applied, copied for each property run (applying them takes a while). */
let schema: Uint8Array;
/** The same, migrated up to the migration before record quality (0020). */
let schemaBefore: Uint8Array;
const BEFORE = FILES.find((name) => name.startsWith("0020_"))!;

beforeAll(async () => {
  SQL = await initSqlJs();
  const db = migrated(BEFORE);
  schemaBefore = db.export();
  migrateOn(db, BEFORE);
  schema = db.export();
  db.close();
});

const fresh = () => new SQL.Database(schema);

/**
 * A database with the migrations applied, up to and including `through` (all by default). sql.js
 * has no FTS5: the full-text indexes and their triggers are left out (no check reads them).
 */
function migrated(through = FILES[FILES.length - 1]!): Database {
  const db = new SQL.Database();
  for (const file of FILES.slice(0, FILES.indexOf(through) + 1)) applyFile(db, file);
  return db;
}

/** FTS5 tables the migrations create (sql.js has no FTS5): statements naming one are left out. */
const fts5Tables = new Set<string>();

function applyFile(db: Database, file: string): void {
  for (const statement of readFileSync(path.join(MIGRATIONS, file), "utf8").split("--> statement-breakpoint")) {
    const virtual = /CREATE VIRTUAL TABLE `?(\w+)`? USING fts5/i.exec(statement);
    if (virtual) fts5Tables.add(virtual[1]!);
    if (virtual || [...fts5Tables].some((table) => statement.includes(table))) continue;
    db.exec(statement);
  }
}

/** Applies the migrations after `from` to a database migrated up to it. */
function migrateOn(db: Database, from: string): void {
  for (const file of FILES.slice(FILES.indexOf(from) + 1)) applyFile(db, file);
}

// Prepared statements are kept per database and reused: preparing a write to `products` compiles
// every trigger on it, which is most of sql.js's time when done per statement.
const prepared = new WeakMap<Database, Map<string, Statement>>();

function statement(db: Database, query: string): Statement {
  let cache = prepared.get(db);
  if (!cache) prepared.set(db, (cache = new Map()));
  let found = cache.get(query);
  if (!found) cache.set(query, (found = db.prepare(query)));
  return found;
}

function rows(db: Database, query: string, params: (string | number | null)[] = []): Record<string, unknown>[] {
  const prepared = statement(db, query);
  prepared.bind(params);
  const out: Record<string, unknown>[] = [];
  while (prepared.step()) out.push(prepared.getAsObject());
  prepared.reset();
  return out;
}

function run(db: Database, query: string, params: (string | number | null)[] = []): void {
  statement(db, query).run(params);
}

const STATUS: Record<string, QualityStatus> = { 1: "pass", 0: "fail", null: "not_applicable" };

const AGGREGATES = [
  "component_count",
  "unweighed_component_count",
  "components_mass_g",
  "bom_entry_count",
  "bom_mass_entry_count",
  "bom_mass_g",
  "clean_image_count",
] as const;

describe("the generated check columns and the TypeScript rules", () => {
  // Weights, sums and sizes around every boundary the rules have, and arbitrary doubles besides.
  const positive = fc.oneof(
    fc.double({ min: 1e-6, max: 1e9, noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(1, 5, 10, 1000, 1250, 25_000, 0.1, 4.99, 25_000.01, 1e9),
  );
  const optional = fc.option(positive, { nil: null, freq: 4 });
  const factor = fc.oneof(
    fc.constantFrom(0.9, 1.1, 0.899_999_999, 1.100_000_001, 1, 0, 2, 0.5),
    fc.double({ min: 0, max: 3, noNaN: true, noDefaultInfinity: true }),
  );
  const inputs = fc
    .record({
      component: fc.boolean(),
      product_type_id: fc.option(fc.constant(1), { nil: null }),
      weight_g: optional,
      height_cm: optional,
      width_cm: optional,
      depth_cm: optional,
      circularity: fc.boolean(),
      component_count: fc.nat(5),
      unweighed: fc.nat(5),
      componentsFactor: factor,
      bom_entry_count: fc.nat(5),
      bom_mass_entry_count: fc.nat(5),
      bomFactor: factor,
      clean_image_count: fc.nat(3),
      densityBoundary: fc.constantFrom(null, 0.005, 25),
    })
    .map((r): QualityInputs => {
      let weight = r.weight_g;
      const dims = [r.height_cm, r.width_cm, r.depth_cm];
      // Now and then exactly on a density bound: the weight of a box of the given size at 0.005 or 25 g/cm³.
      if (r.densityBoundary !== null && dims.every((d) => d !== null)) weight = r.densityBoundary * (dims[0]! * dims[1]! * dims[2]!);
      const components = r.component_count;
      const massEntries = Math.min(r.bom_mass_entry_count, r.bom_entry_count);
      return {
        parent_id: r.component ? 999_999 : null,
        product_type_id: r.product_type_id,
        weight_g: weight === 0 ? null : weight,
        height_cm: r.height_cm,
        width_cm: r.width_cm,
        depth_cm: r.depth_cm,
        circularity_properties: r.circularity ? '{"recyclability":"PP"}' : null,
        component_count: components,
        unweighed_component_count: Math.min(r.unweighed, components),
        components_mass_g: components === 0 ? null : (weight ?? 100) * r.componentsFactor,
        bom_entry_count: r.bom_entry_count,
        bom_mass_entry_count: massEntries,
        bom_mass_g: massEntries === 0 ? null : (weight ?? 100) * r.bomFactor,
        clean_image_count: r.clean_image_count,
      };
    });

  it("agree on every status and the score", () => {
    const db = fresh();
    run(db, "INSERT INTO users (id, email, email_canonical, username) VALUES (100, 'a@example.org', 'a@example.org', 'ada')");
    run(db, "INSERT INTO product_types (id, name) VALUES (1, 'Kettle')");
    // One transaction for all runs: a commit per statement is most of sql.js's time here.
    run(db, "BEGIN");
    const columns = [
      "parent_id",
      "product_type_id",
      "weight_g",
      "height_cm",
      "width_cm",
      "depth_cm",
      "circularity_properties",
      ...AGGREGATES,
    ];
    let id = 0;
    fc.assert(
      fc.property(inputs, (record) => {
        id++;
        // Foreign keys are off (sql.js's default): a component's parent need not exist here.
        run(
          db,
          `INSERT INTO products (id, owner_id, name, amount_in_parent, depth, ${columns.join(", ")})
           VALUES (?, 100, 'Record', ?, ?, ${columns.map(() => "?").join(", ")})`,
          [
            id,
            record.parent_id === null ? null : 1,
            record.parent_id === null ? 0 : 1,
            ...columns.map((c) => record[c as keyof QualityInputs] as number | string | null),
          ],
        );
        const [stored] = rows(db, `SELECT quality_score, ${QUALITY_CHECK_CODES.map(checkColumn).join(", ")} FROM products WHERE id = ?`, [
          id,
        ]);
        const expected = evaluateQuality(record);
        const statuses = QUALITY_CHECK_CODES.map((code) => STATUS[String(stored![checkColumn(code)])]);
        expect(statuses).toEqual(expected.checks.map((c) => c.status));
        expect(stored!.quality_score).toBe(expected.score);
      }),
      { numRuns: 300 },
    );
  });
});

/** The counts of every record recomputed from the tables, as the triggers' statements compute them. */
function recount(db: Database): Record<string, unknown>[] {
  return rows(
    db,
    `SELECT p.id,
       (SELECT count(*) FROM products c WHERE c.parent_id = p.id) AS component_count,
       (SELECT count(*) FROM products c WHERE c.parent_id = p.id AND c.weight_g IS NULL) AS unweighed_component_count,
       (SELECT sum(c.weight_g * c.amount_in_parent) FROM products c WHERE c.parent_id = p.id) AS components_mass_g,
       (SELECT count(*) FROM bill_of_materials b WHERE b.product_id = p.id) AS bom_entry_count,
       (SELECT count(*) FROM bill_of_materials b WHERE b.product_id = p.id AND b.unit IN ('kg', 'g')) AS bom_mass_entry_count,
       (SELECT sum(CASE b.unit WHEN 'kg' THEN b.quantity * 1000 WHEN 'g' THEN b.quantity END) FROM bill_of_materials b WHERE b.product_id = p.id) AS bom_mass_g,
       (SELECT count(*) FROM images i WHERE i.product_id = p.id AND i.status = 'clean') AS clean_image_count
     FROM products p ORDER BY p.id`,
  );
}

const stored = (db: Database) => rows(db, `SELECT id, ${AGGREGATES.join(", ")} FROM products ORDER BY id`);

/** `quality_counts` as the triggers keep it, without the profiles no record has. */
const counts = (db: Database) => rows(db, "SELECT base, profile, records FROM quality_counts WHERE records <> 0 ORDER BY base, profile");

/** The same profiles counted from the records. */
function recountProfiles(db: Database): Record<string, unknown>[] {
  const profile = [
    ...QUALITY_CHECK_CODES.map((code) => `CASE ${checkColumn(code)} WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END`),
    "':'",
    "min(CAST(round(quality_score * 1000) AS INTEGER) / 100, 10)",
  ].join(" || ");
  return rows(db, `SELECT parent_id IS NULL AS base, ${profile} AS profile, count(*) AS records FROM products GROUP BY 1, 2 ORDER BY 1, 2`);
}

describe("the triggers", () => {
  type Op =
    | { kind: "component"; parent: number; weight: number | null; amount: number }
    | { kind: "weigh"; record: number; weight: number | null }
    | { kind: "amount"; record: number; amount: number }
    | { kind: "move"; record: number; to: number }
    | { kind: "delete"; record: number }
    | { kind: "bom"; record: number; material: number; quantity: number; unit: string }
    | { kind: "bomChange"; record: number; material: number; quantity: number; unit: string }
    | { kind: "bomDelete"; record: number; material: number }
    | { kind: "image"; record: number; status: string }
    | { kind: "imageStatus"; image: number; status: string }
    | { kind: "imageDelete"; image: number };

  const pick = fc.nat(40);
  const weight = fc.option(fc.constantFrom(1, 2.5, 10, 120.25, 1000), { nil: null });
  const unit = fc.constantFrom("kg", "g", "m", "cm");
  const status = fc.constantFrom("pending", "clean", "rejected");
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant("component" as const), parent: pick, weight, amount: fc.integer({ min: 1, max: 5 }) }),
    fc.record({ kind: fc.constant("weigh" as const), record: pick, weight }),
    fc.record({ kind: fc.constant("amount" as const), record: pick, amount: fc.integer({ min: 1, max: 5 }) }),
    fc.record({ kind: fc.constant("move" as const), record: pick, to: fc.nat(2) }),
    fc.record({ kind: fc.constant("delete" as const), record: pick }),
    fc.record({
      kind: fc.constant("bom" as const),
      record: pick,
      material: fc.integer({ min: 1, max: 3 }),
      quantity: fc.constantFrom(0.5, 12, 250),
      unit,
    }),
    fc.record({
      kind: fc.constant("bomChange" as const),
      record: pick,
      material: fc.integer({ min: 1, max: 3 }),
      quantity: fc.constantFrom(1, 3.25),
      unit,
    }),
    fc.record({ kind: fc.constant("bomDelete" as const), record: pick, material: fc.integer({ min: 1, max: 3 }) }),
    fc.record({ kind: fc.constant("image" as const), record: pick, status }),
    fc.record({ kind: fc.constant("imageStatus" as const), image: fc.nat(20), status }),
    fc.record({ kind: fc.constant("imageDelete" as const), image: fc.nat(20) }),
  );

  it("keep every record's counts and sums, and the dataset's quality counts, as a recount finds them, whatever the writes", () => {
    const db = fresh();
    db.run("PRAGMA foreign_keys = ON");
    db.run("INSERT INTO users (id, email, email_canonical, username) VALUES (100, 'a@example.org', 'a@example.org', 'ada')");
    db.run("INSERT INTO materials (id, name) VALUES (1, 'Steel'), (2, 'Copper'), (3, 'PP')");
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        // Each run starts from the same three base products and is rolled back at its end.
        db.run("BEGIN");
        // Three base products to build under and move between.
        run(
          db,
          "INSERT INTO products (id, owner_id, name, weight_g) VALUES (1, 100, 'Base one', 1000), (2, 100, 'Base two', NULL), (3, 100, 'Base three', 50)",
        );
        const ids = () => rows(db, "SELECT id, depth FROM products ORDER BY id") as { id: number; depth: number }[];
        const images = () => rows(db, "SELECT id FROM images ORDER BY id") as { id: string }[];
        const component = (n: number) => ids().filter((r) => r.depth > 0)[n % Math.max(ids().filter((r) => r.depth > 0).length, 1)];
        const any = (n: number) => ids()[n % ids().length];
        let imageSeq = 0;
        for (const o of ops) {
          if (ids().length === 0) break;
          switch (o.kind) {
            case "component": {
              const parent = any(o.parent)!;
              if (parent.depth >= 10) break;
              run(
                db,
                "INSERT INTO products (owner_id, name, parent_id, amount_in_parent, depth, weight_g) VALUES (100, 'Part', ?, ?, ?, ?)",
                [parent.id, o.amount, parent.depth + 1, o.weight],
              );
              break;
            }
            case "weigh":
              run(db, "UPDATE products SET weight_g = ? WHERE id = ?", [o.weight, any(o.record)!.id]);
              break;
            case "amount": {
              const target = component(o.record);
              if (target) run(db, "UPDATE products SET amount_in_parent = ? WHERE id = ?", [o.amount, target.id]);
              break;
            }
            case "move": {
              // No route moves a component; the triggers cover it all the same (old and new parent).
              const target = component(o.record);
              const bases = ids().filter((r) => r.depth === 0);
              if (target && bases.length > 0)
                run(db, "UPDATE products SET parent_id = ? WHERE id = ?", [bases[o.to % bases.length]!.id, target.id]);
              break;
            }
            case "delete":
              run(db, "DELETE FROM products WHERE id = ?", [any(o.record)!.id]);
              break;
            case "bom":
              run(db, "INSERT OR IGNORE INTO bill_of_materials (product_id, material_id, quantity, unit) VALUES (?, ?, ?, ?)", [
                any(o.record)!.id,
                o.material,
                o.quantity,
                o.unit,
              ]);
              break;
            case "bomChange":
              run(db, "UPDATE bill_of_materials SET quantity = ?, unit = ? WHERE product_id = ? AND material_id = ?", [
                o.quantity,
                o.unit,
                any(o.record)!.id,
                o.material,
              ]);
              break;
            case "bomDelete":
              run(db, "DELETE FROM bill_of_materials WHERE product_id = ? AND material_id = ?", [any(o.record)!.id, o.material]);
              break;
            case "image": {
              const id = (++imageSeq).toString(16).padStart(32, "0");
              run(
                db,
                `INSERT INTO images (id, product_id, storage_key, filename, content_type, size_bytes, status, rejected_reason, width, height)
                 VALUES (?, ?, 'k.jpg', 'k.jpg', 'image/jpeg', 10, ?, ?, 1, 1)`,
                [id, any(o.record)!.id, o.status, o.status === "rejected" ? "malware" : null],
              );
              break;
            }
            case "imageStatus": {
              const image = images()[o.image % Math.max(images().length, 1)];
              if (image) {
                run(db, "UPDATE images SET status = ?, rejected_reason = ? WHERE id = ?", [
                  o.status,
                  o.status === "rejected" ? "unscanned" : null,
                  image.id,
                ]);
              }
              break;
            }
            case "imageDelete": {
              const image = images()[o.image % Math.max(images().length, 1)];
              if (image) run(db, "DELETE FROM images WHERE id = ?", [image.id]);
              break;
            }
          }
        }
        try {
          expect(stored(db)).toEqual(recount(db));
          expect(counts(db)).toEqual(recountProfiles(db));
        } finally {
          db.run("ROLLBACK");
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe("migration 0023 on existing data", () => {
  it("fills the counts of every record as the triggers would have, on the demo dataset", () => {
    const demo = demoStatements({ products: 12, seed: 4 });
    const images = [
      // Clean, pending and rejected images on a few records: only the clean ones count.
      "INSERT INTO images (id, product_id, storage_key, filename, content_type, size_bytes, status, rejected_reason, width, height) SELECT printf('%032x', id), id, 'k.jpg', 'k.jpg', 'image/jpeg', 10, 'clean', NULL, 1, 1 FROM products WHERE id % 7 = 0",
      "INSERT INTO images (id, product_id, storage_key, filename, content_type, size_bytes, status, rejected_reason, width, height) SELECT printf('%032x', id + 1000000), id, 'k.jpg', 'k.jpg', 'image/jpeg', 10, 'pending', NULL, 1, 1 FROM products WHERE id % 5 = 0",
      "INSERT INTO images (id, product_id, storage_key, filename, content_type, size_bytes, status, rejected_reason, width, height) SELECT printf('%032x', id + 2000000), id, 'k.jpg', 'k.jpg', 'image/jpeg', 10, 'rejected', 'malware', 1, 1 FROM products WHERE id % 3 = 0",
    ];
    // Seeded before the migration: its backfill fills the counts.
    const backfilled = new SQL.Database(schemaBefore);
    for (const statement of [...demo, ...images]) backfilled.exec(statement);
    migrateOn(backfilled, BEFORE);
    // Seeded after it: the triggers fill them, row by row.
    const triggered = fresh();
    for (const statement of [...demo, ...images]) triggered.exec(statement);

    const quality = `SELECT id, ${AGGREGATES.join(", ")}, quality_score, ${QUALITY_CHECK_CODES.map(checkColumn).join(", ")} FROM products ORDER BY id`;
    const after = rows(backfilled, quality);
    expect(after.length).toBeGreaterThan(100);
    expect(after).toEqual(rows(triggered, quality));
    expect(stored(backfilled)).toEqual(recount(backfilled));
    // The dataset's counts, filled in one pass by the migration and kept row by row by the triggers.
    expect(counts(backfilled)).toEqual(counts(triggered));
    expect(counts(backfilled)).toEqual(recountProfiles(backfilled));
    // The data is varied enough to mean something: these checks come out more than one way.
    for (const code of ["has_image", "components_mass_balance", "materials_mass_balance", "has_dimensions"]) {
      const seen = new Set(after.map((row) => row[checkColumn(code as (typeof QUALITY_CHECK_CODES)[number])]));
      expect(seen.size, code).toBeGreaterThanOrEqual(2);
    }
  });
});
