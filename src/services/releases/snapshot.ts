import { and, eq, exists, gt, lte, ne, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { batchRows, type Db } from "../../db/client";
import { columnList, columnsOf, type Row } from "../../db/rows";
import { products, type releaseProductPreimages, releaseRecords, releaseSnapshotProgress, releases } from "../../db/schema";
import { checkColumn, QUALITY_CHECK_CODES } from "../../lib/record-quality";
import type { ReleaseSliceServices } from "./build-state";
import { type BuildFence, fenced } from "./build-state";
import { referenceCopies } from "./tables";

/** The check columns, copied as they stand at the snapshot (the quality table is written from them). */
const QUALITY_COLUMNS = QUALITY_CHECK_CODES.map(checkColumn);

/** What the snapshot found: the release's counts at `snapshotAt` (Unix seconds). */
export interface SnapshotCounts {
  snapshotAt: number;
  records: number;
  baseProducts: number;
  images: number;
  recordMaterials: number;
}

/**
 * The tables a build stages into, emptied before a snapshot and after the build ends: the staged
 * selection, the accounts it holds, and the versions of rows that writes changed while it was
 * being copied.
 */
const STAGING_TABLES = [
  "release_records",
  "release_record_materials",
  "release_images",
  "release_reference_rows",
  "release_owners",
  "release_product_preimages",
  "release_bom_preimages",
  "release_image_preimages",
] as const;

/** Staging rows deleted per statement (and round trip) when they are emptied. */
const STAGING_DELETE_CHUNK = 10_000;

/**
 * Empties a release's staging tables while `condition` holds (its build has ended, or a new
 * attempt starts), one table and at most `STAGING_DELETE_CHUNK` rows per round trip: one DELETE
 * of 100,000s of rows would hold the database (D1 runs one query at a time) for as long as it
 * takes; chunks let other queries in between. `stop` (asked after each chunk: a deadline, the
 * invocation's query budget) ends it early; returns whether everything is gone.
 */
export async function clearStaging(db: Db, version: string, condition: SQL, stop: () => boolean = () => false): Promise<boolean> {
  for (const table of STAGING_TABLES) {
    for (;;) {
      // Raw: a bounded slice (rowids under a LIMIT) of a table named by the list, under the caller's condition.
      const [, left] = await batchRows<[unknown, { left: number }]>(db, [
        sql`DELETE FROM ${sql.raw(table)}
          WHERE rowid IN (SELECT rowid FROM ${sql.raw(table)} WHERE release_version = ${version} LIMIT ${STAGING_DELETE_CHUNK}) AND ${condition}`,
        sql`SELECT EXISTS (SELECT 1 FROM ${sql.raw(table)} WHERE release_version = ${version}) AND ${condition} AS left`,
      ]);
      if (left[0]?.left !== 1) break;
      if (stop()) return false;
    }
  }
  return true;
}

/**
 * One unit of a release's snapshot (docs/releases.md, "The snapshot"), each a bounded round trip:
 *
 * 1. `begin`: what an earlier attempt or ended releases left in the staging tables goes, a chunk
 *    at a time; then ONE batch fixes the snapshot's instant: the newest record then (`max_id`),
 *    the accounts that had accepted the contributor terms (`release_owners`), those of them who
 *    opted in to release credit and own a base product (`release_credits`), and the reference
 *    tables, and from that batch on the triggers of migration 0025 keep the earlier version of
 *    every row a write changes before the copy reaches it.
 * 2. `copy`: the next base products in id order, as many as hold about `releaseSnapshotRecords`
 *    records, with every component below them, their bills of materials and clean images, as
 *    they were at the instant (the kept versions where a write came first; their quality checks
 *    and score as they stood), in one batch that
 *    also moves the cursor and counts what it staged: atomic, so a batch that dies leaves
 *    nothing half-copied, and a repeated one finds the cursor moved and copies nothing.
 * 3. `finish`: the counts, the subjects (product types) and the instant are stamped on the
 *    release, and the copy's row goes
 *    (which stops the triggers' work).
 *
 * Every statement is fenced on the build's lease and the snapshot not having been taken.
 */
export type SnapshotStep = { kind: "progress" } | { kind: "taken"; counts: SnapshotCounts };

interface Progress {
  build_id: string;
  taken_at: number;
  max_id: number;
  cursor: number;
}

export async function snapshotUnit(
  svc: Pick<ReleaseSliceServices, "db" | "config">,
  fence: BuildFence,
  options: { termsVersion: number; initialState: string; beforeBegin: () => Promise<void>; stop: () => boolean },
): Promise<SnapshotStep | null> {
  const { version, buildId } = fence;
  const open = sql`EXISTS (SELECT 1 FROM releases WHERE ${fenced(fence)} AND snapshot_at IS NULL)`;
  const [row] = await svc.db.all<Progress>(
    svc.db
      .select(columnsOf(releaseSnapshotProgress, ["build_id", "taken_at", "max_id", "cursor"]))
      .from(releaseSnapshotProgress)
      .where(eq(releaseSnapshotProgress.release_version, version)),
  );
  if (!row || row.build_id !== buildId) {
    // A fresh attempt: leftovers first (this release's, then those of ended releases), a chunk at a time.
    if (!(await clearStaging(svc.db, version, open, options.stop))) return { kind: "progress" };
    const r = alias(releases, "r");
    const staged = svc.db.select({ one: sql`1` }).from(releaseRecords).where(eq(releaseRecords.release_version, r.version));
    const ended = await svc.db.all<{ version: string }>(
      svc.db
        .select({ version: r.version })
        .from(r)
        .where(and(ne(r.status, "building"), exists(staged))),
    );
    for (const leftover of ended) {
      const gone = sql`EXISTS (SELECT 1 FROM releases WHERE version = ${leftover.version} AND status <> 'building') AND ${open}`;
      if (!(await clearStaging(svc.db, leftover.version, gone, options.stop))) return { kind: "progress" };
    }
    await options.beforeBegin();
    // Raw: every write is guarded by `open` (the fence, and no snapshot yet), and the copies are INSERT … SELECT.
    const results = await batchRows<unknown[]>(svc.db, [
      sql`DELETE FROM release_files WHERE release_version = ${version} AND ${open}`,
      sql`DELETE FROM release_snapshot_progress WHERE release_version = ${version} AND ${open}`,
      sql`INSERT INTO release_owners (release_version, user_id)
        SELECT ${version}, id FROM users WHERE terms_accepted_version >= ${options.termsVersion} AND ${open}`,
      // The contributors it credits: accounts that opted in, as they are now, whose records it holds
      // (the owners of its base products, read through the owner index).
      sql`DELETE FROM release_credits WHERE release_version = ${version} AND ${open}`,
      sql`INSERT INTO release_credits (release_version, position, username, orcid)
        SELECT ${version}, row_number() OVER (ORDER BY u.username), u.username, u.orcid FROM users u
        WHERE u.release_credit = 1 AND u.terms_accepted_version >= ${options.termsVersion}
          AND EXISTS (SELECT 1 FROM products p WHERE p.owner_id = u.id AND p.parent_id IS NULL) AND ${open}`,
      ...referenceCopies(version, open),
      sql`INSERT INTO release_snapshot_progress (release_version, build_id, taken_at, max_id)
        SELECT ${version}, ${buildId}, unixepoch(), coalesce((SELECT max(id) FROM products), 0) WHERE ${open} RETURNING max_id`,
    ]);
    if ((results[results.length - 1] as unknown[]).length === 0) return null;
    return { kind: "progress" };
  }
  const current = sql`EXISTS (SELECT 1 FROM release_snapshot_progress WHERE release_version = ${version} AND build_id = ${buildId} AND cursor = ${row.cursor})`;
  const guard = sql`${open} AND ${current}`;
  if (row.cursor < row.max_id) {
    const end = await copyEnd(svc.db, row, svc.config.releaseSnapshotRecords);
    // Raw: the copy's bulk statements under `guard`, and the lease renewal fenced on it.
    const moved = await batchRows<unknown[]>(svc.db, [
      ...copyStatements(version, row, end, guard),
      sql`UPDATE releases SET lease_until = unixepoch() + ${fence.leaseSeconds}, updated_at = unixepoch() WHERE ${fenced(fence)}`,
    ]);
    if ((moved[moved.length - 2] as unknown[]).length === 0) return null;
    return { kind: "progress" };
  }
  // Raw: the stamp is fenced (compare-and-set on the lease, the open snapshot and the cursor), from sub-selects of the same statement.
  const [stamped] = await batchRows<[SnapshotCounts & { snapshot_at: number }, unknown]>(svc.db, [
    sql`UPDATE releases SET (snapshot_at, records, base_products, images, record_materials) =
        (SELECT taken_at, records, base_products, images, record_materials FROM release_snapshot_progress WHERE release_version = ${version}),
        subjects = (SELECT json_group_array(name) FROM (SELECT DISTINCT t.name FROM release_records r
          JOIN product_types t ON t.id = r.product_type_id WHERE r.release_version = ${version} ORDER BY t.name)),
        records_written = 0, build_state = ${options.initialState}, lease_until = unixepoch() + ${fence.leaseSeconds}, updated_at = unixepoch()
      WHERE ${fenced(fence)} AND snapshot_at IS NULL AND ${current}
      RETURNING snapshot_at AS snapshotAt, records, base_products AS baseProducts, images, record_materials AS recordMaterials`,
    sql`DELETE FROM release_snapshot_progress WHERE release_version = ${version} AND build_id = ${buildId}
      AND EXISTS (SELECT 1 FROM releases WHERE version = ${version} AND build_id = ${buildId} AND snapshot_at IS NOT NULL)`,
  ]);
  const counts = stamped[0];
  return counts ? { kind: "taken", counts } : null;
}

/**
 * Where the next copy batch ends: at the base product of the `records`-th record (by tree, in id
 * order) after the cursor, so that a batch holds whole trees and about that many records; at
 * `max_id` for the last one (base products deleted since the instant have ids in between).
 */
async function copyEnd(db: Db, row: Progress, records: number): Promise<number> {
  const [found] = await db.all<{ root_id: number | null }>(
    db
      .select({ root_id: products.root_id })
      .from(products)
      .where(and(gt(products.root_id, row.cursor), lte(products.root_id, row.max_id)))
      .orderBy(products.root_id)
      .limit(1)
      .offset(records - 1),
  );
  return found?.root_id ?? row.max_id;
}

/** The columns a snapshot copies, read from `products` and from the preimages kept of changed ones. */
const RECORD_FIELDS = columnList([
  ...([
    "id",
    "parent_id",
    "root_id",
    "owner_id",
    "amount_in_parent",
    "name",
    "description",
    "brand",
    "model",
    "product_type_id",
    "weight_g",
    "height_cm",
    "width_cm",
    "depth_cm",
    "circularity_properties",
    "created_at",
    "updated_at",
    "quality_score",
  ] as const satisfies readonly (keyof Row<typeof products> & keyof Row<typeof releaseProductPreimages>)[]),
  ...QUALITY_COLUMNS,
]);

/**
 * The statements of one copy batch, for the base products with ids in (`row.cursor`, `end`]:
 * their records as they were at the instant, their bills of materials and images, the counts,
 * and the cursor moved to `end` (the second to last statement, which returns a row exactly when
 * the batch counted).
 */
function copyStatements(version: string, row: Progress, end: number, guard: SQL): SQL[] {
  const inRange = (alias: string) => sql.raw(`${alias}.root_id > ${Number(row.cursor)} AND ${alias}.root_id <= ${Number(end)}`);
  const kept = (table: string, key: SQL) => sql`EXISTS (SELECT 1 FROM ${sql.raw(table)} x WHERE x.release_version = ${version} AND ${key})`;
  // The records of the range at the instant: live rows no write has touched since, and the kept versions.
  const atInstant = sql`SELECT ${RECORD_FIELDS} FROM products p WHERE ${inRange("p")} AND p.id <= ${row.max_id}
      AND NOT ${kept("release_product_preimages", sql`x.id = p.id`)}
    UNION ALL SELECT ${RECORD_FIELDS} FROM release_product_preimages k WHERE k.release_version = ${version} AND ${inRange("k")}`;
  // Their ids, for the counts and the rows that hang off them.
  const ids = sql`SELECT id FROM products p WHERE ${inRange("p")} UNION SELECT id FROM release_product_preimages k WHERE k.release_version = ${version} AND ${inRange("k")}`;
  const staged = (alias: string) =>
    sql`EXISTS (SELECT 1 FROM release_records r WHERE r.release_version = ${version} AND r.id = ${sql.raw(alias)})`;
  // Raw: bulk INSERT … SELECT copies (a recursive CTE among them) composed from the range's parts, each under `guard`.
  return [
    // Base products of accounts that had accepted the terms, and everything in their trees; a
    // component's owner is its base product's.
    sql`WITH t0 AS MATERIALIZED (${atInstant}),
        roots(id, owner_id) AS (SELECT id, owner_id FROM t0 WHERE parent_id IS NULL
          AND owner_id IN (SELECT user_id FROM release_owners WHERE release_version = ${version}))
      INSERT INTO release_records (release_version, id, parent_id, amount_in_parent, owner_id, name, description, brand, model,
        product_type_id, weight_g, height_cm, width_cm, depth_cm, volume_cm3, circularity_properties, created_at, updated_at,
        quality_score, ${sql.raw(QUALITY_COLUMNS.join(", "))})
      SELECT ${version}, t0.id, t0.parent_id, t0.amount_in_parent, roots.owner_id, t0.name, t0.description, t0.brand, t0.model,
        t0.product_type_id, t0.weight_g, t0.height_cm, t0.width_cm, t0.depth_cm, t0.height_cm * t0.width_cm * t0.depth_cm,
        t0.circularity_properties, t0.created_at, t0.updated_at,
        t0.quality_score, ${sql.raw(QUALITY_COLUMNS.map((column) => `t0.${column}`).join(", "))}
      FROM t0 JOIN roots ON roots.id = t0.root_id WHERE ${guard}`,
    // A component whose deletion was under way at the instant (detached: its parent is itself)
    // was no longer in the dataset, nor was anything below it.
    sql`WITH RECURSIVE gone(id) AS (
        SELECT id FROM (${atInstant}) WHERE parent_id = id AND root_id <> id
        UNION SELECT p.id FROM products p JOIN gone ON p.parent_id = gone.id WHERE p.id <> gone.id
        UNION SELECT k.id FROM release_product_preimages k JOIN gone ON k.parent_id = gone.id WHERE k.release_version = ${version} AND k.id <> gone.id)
      DELETE FROM release_records WHERE release_version = ${version} AND id IN (SELECT id FROM gone) AND ${guard}`,
    sql`INSERT INTO release_record_materials (release_version, record_id, material_id, quantity, unit)
      SELECT ${version}, b.product_id, b.material_id, b.quantity, b.unit
      FROM products p JOIN bill_of_materials b ON b.product_id = p.id
      WHERE ${inRange("p")} AND ${staged("p.id")}
        AND NOT ${kept("release_bom_preimages", sql`x.product_id = b.product_id AND x.material_id = b.material_id`)} AND ${guard}
      UNION ALL SELECT ${version}, k.product_id, k.material_id, k.quantity, k.unit FROM release_bom_preimages k
      WHERE k.release_version = ${version} AND ${inRange("k")} AND k.existed = 1 AND ${staged("k.product_id")} AND ${guard}`,
    // One row per record and image file: a record holding the same bytes twice lists them once.
    sql`INSERT OR IGNORE INTO release_images (release_version, file, record_id, storage_key, width, height, bytes, content_type)
      SELECT ${version}, 'images/' || i.storage_key, i.product_id, i.storage_key, i.width, i.height, i.size_bytes, i.content_type
      FROM products p JOIN images i ON i.product_id = p.id
      WHERE ${inRange("p")} AND i.status = 'clean' AND ${staged("p.id")} AND NOT ${kept("release_image_preimages", sql`x.id = i.id`)} AND ${guard}
      UNION ALL SELECT ${version}, 'images/' || k.storage_key, k.product_id, k.storage_key, k.width, k.height, k.size_bytes, k.content_type
      FROM release_image_preimages k
      WHERE k.release_version = ${version} AND ${inRange("k")} AND k.existed = 1 AND k.status = 'clean' AND ${staged("k.product_id")} AND ${guard}`,
    sql`UPDATE release_snapshot_progress SET cursor = ${end},
        records = records + (SELECT count(*) FROM release_records WHERE release_version = ${version} AND id IN (${ids})),
        base_products = base_products + (SELECT count(*) FROM release_records
          WHERE release_version = ${version} AND id > ${row.cursor} AND id <= ${end} AND parent_id IS NULL),
        images = images + (SELECT count(*) FROM release_images WHERE release_version = ${version} AND record_id IN (${ids})),
        record_materials = record_materials + (SELECT count(*) FROM release_record_materials WHERE release_version = ${version} AND record_id IN (${ids}))
      WHERE release_version = ${version} AND ${guard} RETURNING cursor`,
  ];
}
