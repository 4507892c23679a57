import { type SQL, sql } from "drizzle-orm";
import { batchRows, type Db } from "../../db/client";
import { checkColumn, QUALITY_CHECK_CODES } from "../../lib/record-quality";
import type { ReleaseSliceServices } from "./build-state";
import { type BuildFence, fenced } from "./build-state";
import { referenceCopies } from "./tables";

/** The check columns, copied as they stand at the snapshot (the quality table is written from them). */
const QUALITY_COLUMNS = sql.raw(QUALITY_CHECK_CODES.map(checkColumn).join(", "));
const QUALITY_COLUMNS_OF_P = sql.raw(QUALITY_CHECK_CODES.map((code) => `p.${checkColumn(code)}`).join(", "));

/** What the snapshot found: the release's counts at `snapshotAt` (Unix seconds). */
export interface SnapshotCounts {
  snapshotAt: number;
  records: number;
  baseProducts: number;
  images: number;
  recordMaterials: number;
}

/** The staging tables, emptied before a snapshot and after the build ends. */
const STAGING_TABLES = ["release_records", "release_record_materials", "release_images", "release_reference_rows"] as const;

/**
 * Statements deleting up to `limit` staging rows of a release per table when `condition` holds,
 * and a last one answering `{ left: 0 | 1 }`: whether any are left.
 */
export function stagingChunkDeletes(version: string, limit: number, condition: SQL): SQL[] {
  return [
    ...STAGING_TABLES.map(
      (table) => sql`DELETE FROM ${sql.raw(table)}
        WHERE rowid IN (SELECT rowid FROM ${sql.raw(table)} WHERE release_version = ${version} LIMIT ${limit}) AND ${condition}`,
    ),
    sql`SELECT (${sql.join(
      STAGING_TABLES.map((table) => sql`EXISTS (SELECT 1 FROM ${sql.raw(table)} WHERE release_version = ${version})`),
      sql` OR `,
    )}) AND ${condition} AS left`,
  ];
}

/** Statements deleting the staging rows of this release and of every release that is no longer building (leftovers). */
function leftoverDeletes(version: string, condition: SQL): SQL[] {
  return STAGING_TABLES.map(
    (table) => sql`DELETE FROM ${sql.raw(table)}
      WHERE (release_version = ${version} OR release_version IN (SELECT version FROM releases WHERE status <> 'building')) AND ${condition}`,
  );
}

/**
 * Takes the release's snapshot in ONE D1 batch, which D1 runs as one transaction: the base
 * products whose owner has accepted the contributor terms (`termsVersion` or later), every
 * component below them (with their quality checks as they stand), their bills of materials, their
 * clean images, and the reference tables are copied into the staging tables, the owners who opted
 * in to release credit are recorded (`release_credits`), and the counts, the subjects (product
 * types) and `snapshot_at` are stamped. Edits,
 * creates and deletions that land before the batch are all in, those after it none: the files
 * are then written from the staging tables only. Leftovers go in the same batch: an earlier
 * attempt's staging and file rows, and the staging rows of ended releases whose cleanup failed. Every statement is fenced on the build's lease and on the
 * snapshot not having been taken; returns null when the fence no longer holds.
 */
export async function takeSnapshot(
  svc: Pick<ReleaseSliceServices, "db">,
  fence: BuildFence,
  termsVersion: number,
  initialState: string,
): Promise<SnapshotCounts | null> {
  const { version } = fence;
  const guard = sql`EXISTS (SELECT 1 FROM releases WHERE ${fenced(fence)} AND snapshot_at IS NULL)`;
  const staged = sql`release_version = ${version}`;
  // The base products of the release: those of owners who accepted the terms.
  const bases = sql`products p JOIN users u ON u.id = p.owner_id WHERE p.parent_id IS NULL AND u.terms_accepted_version >= ${termsVersion}`;
  const results = await batchRows<unknown[]>(svc.db, [
    ...leftoverDeletes(version, guard),
    sql`DELETE FROM release_files WHERE release_version = ${version} AND ${guard}`,
    // The owner of a component is its base product's, carried down the tree.
    sql`WITH RECURSIVE tree(id, owner_id) AS (
        SELECT p.id, p.owner_id FROM ${bases} AND ${guard}
        UNION ALL
        SELECT c.id, tree.owner_id FROM tree JOIN products c ON c.parent_id = tree.id)
      INSERT INTO release_records (release_version, id, parent_id, amount_in_parent, owner_id, name, description, brand, model,
        product_type_id, weight_g, height_cm, width_cm, depth_cm, volume_cm3, circularity_properties, created_at, updated_at,
        quality_score, ${QUALITY_COLUMNS})
      SELECT ${version}, p.id, p.parent_id, p.amount_in_parent, tree.owner_id, p.name, p.description, p.brand, p.model,
        p.product_type_id, p.weight_g, p.height_cm, p.width_cm, p.depth_cm, p.volume_cm3, p.circularity_properties, p.created_at, p.updated_at,
        p.quality_score, ${QUALITY_COLUMNS_OF_P}
      FROM tree JOIN products p ON p.id = tree.id`,
    sql`INSERT INTO release_record_materials (release_version, record_id, material_id, quantity, unit)
      SELECT ${version}, b.product_id, b.material_id, b.quantity, b.unit
      FROM release_records r JOIN bill_of_materials b ON b.product_id = r.id
      WHERE r.release_version = ${version} AND ${guard}`,
    // One row per record and image file: a record holding the same bytes twice lists them once.
    sql`INSERT OR IGNORE INTO release_images (release_version, file, record_id, storage_key, width, height, bytes, content_type)
      SELECT ${version}, 'images/' || i.storage_key, i.product_id, i.storage_key, i.width, i.height, i.size_bytes, i.content_type
      FROM release_records r JOIN images i ON i.product_id = r.id
      WHERE r.release_version = ${version} AND i.status = 'clean' AND ${guard}
      ORDER BY i.storage_key, i.product_id`,
    ...referenceCopies(version, guard),
    // The contributors it credits: accounts that opted in, as they are now, whose records it holds
    // (the owners of its base products: the same selection as above, read through the owner index).
    sql`DELETE FROM release_credits WHERE release_version = ${version} AND ${guard}`,
    sql`INSERT INTO release_credits (release_version, position, username, orcid)
      SELECT ${version}, row_number() OVER (ORDER BY u.username), u.username, u.orcid FROM users u
      WHERE u.release_credit = 1 AND u.terms_accepted_version >= ${termsVersion}
        AND EXISTS (SELECT 1 FROM products p WHERE p.owner_id = u.id AND p.parent_id IS NULL) AND ${guard}`,
    sql`UPDATE releases SET snapshot_at = unixepoch(),
        subjects = (SELECT json_group_array(name) FROM (SELECT DISTINCT t.name FROM release_records r
          JOIN product_types t ON t.id = r.product_type_id WHERE r.release_version = ${version} ORDER BY t.name)),
        records = (SELECT count(*) FROM release_records WHERE ${staged}),
        -- Counted on the live tables, in the same transaction as the copy: the same rows, without
        -- reading every staged record for its parent_id.
        base_products = (SELECT count(*) FROM ${bases}),
        images = (SELECT count(*) FROM release_images WHERE ${staged}),
        record_materials = (SELECT count(*) FROM release_record_materials WHERE ${staged}),
        records_written = 0, build_state = ${initialState}, lease_until = unixepoch() + ${fence.leaseSeconds}, updated_at = unixepoch()
      WHERE ${fenced(fence)} AND snapshot_at IS NULL
      RETURNING snapshot_at, records, base_products, images, record_materials`,
  ]);
  const stamped = results[results.length - 1]![0] as
    | { snapshot_at: number; records: number; base_products: number; images: number; record_materials: number }
    | undefined;
  if (!stamped) return null;
  return {
    snapshotAt: stamped.snapshot_at,
    records: stamped.records,
    baseProducts: stamped.base_products,
    images: stamped.images,
    recordMaterials: stamped.record_materials,
  };
}

/** Staging rows deleted per table and statement once a build has ended. */
const STAGING_DELETE_CHUNK = 25_000;

/**
 * Empties a release's staging tables while `condition` holds (its build has ended), in chunks: one
 * DELETE of 100,000s of rows would hold the database (D1 runs one query at a time) for as long as
 * it takes; chunks let other queries in between.
 */
export async function clearStaging(db: Db, version: string, condition: SQL): Promise<void> {
  for (;;) {
    const results = await batchRows<unknown[]>(db, stagingChunkDeletes(version, STAGING_DELETE_CHUNK, condition));
    if ((results[results.length - 1]![0] as { left: number } | undefined)?.left !== 1) return;
  }
}
