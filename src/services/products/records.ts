import { and, eq, type Placeholder, type SQL, sql } from "drizzle-orm";
import { QueryBuilder } from "drizzle-orm/sqlite-core";
import type { Services } from "../../container";
import { batchRows, type RenderedSql, renderedOnce } from "../../db/client";
import { columnList, columnsOf, type Row, type RowOf } from "../../db/rows";
import { billOfMaterials, materials, products, type productTypes, type users, videos } from "../../db/schema";
import { newJobId, recordJobStatements, startDeletionJob } from "../deletions/jobs";
import { queuePurge } from "../media/messages";
import { type FileRow, filesOfRecord, type ImageRow, imagesOfRecord } from "../media/records";
import type { UnitCode } from "./fields";
import { visibleComponent } from "./hidden";

/** Which of the two resources a record is: a base product (no parent) or a component. */
export type RecordKind = "product" | "component";

/** The columns of `products` a record read selects (the rest of `RecordRow` comes from its joins). */
export const RECORD_FIELDS = [
  "id",
  "parent_id",
  "owner_id",
  "name",
  "description",
  "brand",
  "model",
  "weight_g",
  "height_cm",
  "width_cm",
  "depth_cm",
  "volume_cm3",
  "circularity_properties",
  "product_type_id",
  "amount_in_parent",
  "depth",
  "version",
  "created_at",
  "updated_at",
  "quality_score",
] as const satisfies readonly (keyof Row<typeof products>)[];

/** A record as the read statements select it (`recordColumns`), with its owner's name and visibility and its type's name. */
export type RecordRow = Omit<RowOf<typeof products, (typeof RECORD_FIELDS)[number]>, "quality_score"> & {
  /** Generated from the record's checks (docs/quality.md); never null. */
  quality_score: number;
  owner_username: Row<typeof users>["username"];
  owner_visibility: Row<typeof users>["profile_visibility"];
  product_type_name: Row<typeof productTypes>["name"] | null;
};

/** A bill-of-materials entry with its material's name; `unit` is one of the codes a write accepts. */
export type BomRow = Omit<RowOf<typeof billOfMaterials, "product_id" | "material_id" | "quantity" | "unit">, "unit"> & {
  material_name: Row<typeof materials>["name"];
  unit: UnitCode;
};

/** The columns of a video a detail read embeds. */
const VIDEO_FIELDS = ["id", "url", "title", "description", "video_metadata", "created_at"] as const;

export type VideoRow = RowOf<typeof videos, (typeof VIDEO_FIELDS)[number]>;

/**
 * The columns of `RecordRow` from the schema's names, over `products p`, `users u` (the owner)
 * and the product type under alias `types`.
 */
export function recordColumns(types = "t"): SQL {
  return sql.join(
    [
      columnList(RECORD_FIELDS.map((field) => `p.${field}`)),
      sql.raw(`u.username AS owner_username, u.profile_visibility AS owner_visibility, ${types}.name AS product_type_name`),
    ],
    sql`, `,
  );
}

/** Columns of `RecordRow`, for `FROM products p JOIN users u ... LEFT JOIN product_types t`. */
export const RECORD_COLUMNS = recordColumns();

/** The owner (`u`) and the product type (alias `types`) a record row names; `p` is the record. */
export function recordJoins(types = "t"): SQL {
  return sql.raw(`JOIN users u ON u.id = p.owner_id LEFT JOIN product_types ${types} ON ${types}.id = p.product_type_id`);
}

export const RECORD_JOINS = recordJoins();

export const RECORD_FROM = sql`products p ${RECORD_JOINS}`;

/**
 * `p.parent_id IS NULL` for base products, `IS NOT NULL` for components: each resource's routes
 * see only their kind. A component under a record whose deletion is under way is seen by none
 * (`visibleComponent`); a base product being deleted is detached, so it is no base product any more.
 */
export function kindCondition(kind: RecordKind, alias = "p"): SQL {
  return kind === "product"
    ? sql.raw(`${alias}.parent_id IS NULL`)
    : sql`${sql.raw(alias)}.parent_id IS NOT NULL AND ${visibleComponent(alias)}`;
}

const builder = new QueryBuilder();

/** The entries of one record (or the one of `materialId`), with material names, in the order detail reads embed them. */
export function bomEntriesStatement(productId: number | Placeholder, materialId?: number): SQL {
  return builder
    .select({
      ...columnsOf(billOfMaterials, ["product_id", "material_id", "quantity", "unit"]),
      material_name: sql<string>`${materials.name}`.as("material_name"),
    })
    .from(billOfMaterials)
    .innerJoin(materials, eq(materials.id, billOfMaterials.material_id))
    .where(
      and(eq(billOfMaterials.product_id, productId), materialId === undefined ? undefined : eq(billOfMaterials.material_id, materialId)),
    )
    .orderBy(materials.name, billOfMaterials.material_id)
    .getSQL();
}

/** The statements of a detail read: the record, its bill of materials, its direct components, (base products) its videos, its images and files. */
function detailStatements(id: number | Placeholder, kind: RecordKind): SQL[] {
  return [
    // Raw: the record with its owner and type (joins named once in RECORD_FROM) under the kind rule, written once in SQL.
    sql`SELECT ${RECORD_COLUMNS} FROM ${RECORD_FROM} WHERE p.id = ${id} AND ${kindCondition(kind)}`,
    bomEntriesStatement(id),
    sql`SELECT ${RECORD_COLUMNS} FROM ${RECORD_FROM} WHERE p.parent_id = ${id} ORDER BY p.id`,
    kind === "product"
      ? builder.select(columnsOf(videos, VIDEO_FIELDS)).from(videos).where(eq(videos.product_id, id)).orderBy(videos.id).getSQL()
      : sql`SELECT NULL AS id WHERE 0`,
    imagesOfRecord(id),
    filesOfRecord(id),
  ];
}

/** The detail read of each kind, rendered once (a read on nearly every request that shows a record). */
const renderedDetail = {
  product: renderedOnce<{ id: number }>((p) => detailStatements(p.id, "product")),
  component: renderedOnce<{ id: number }>((p) => detailStatements(p.id, "component")),
};

/** Reserves `count` consecutive product ids in one statement; returns the first. */
export function reserveIdsStatement(count: number): SQL {
  // Raw: the block is taken by the statement itself (no read before it), and max(id)+1 keeps it
  // clear of rows inserted by other means (fixtures, imports).
  return sql`UPDATE id_blocks
    SET next_id = max(next_id, coalesce((SELECT max(id) FROM products), 0) + 1) + ${count}
    WHERE name = 'products' RETURNING next_id - ${count} AS first_id`;
}

/** The ids among `ids` that exist in `table`, with their names: one statement, the ids as one JSON parameter. */
export function existingIdsStatement(table: "materials" | "product_types", ids: readonly number[]): SQL {
  // Raw: the ids travel as one JSON parameter (json_each), however many there are.
  return sql`SELECT id, name FROM ${sql.raw(table)} WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
}

/** A record with what its detail read embeds. */
export interface RecordDetail {
  row: RecordRow;
  bom: BomRow[];
  components: RecordRow[];
  videos: VideoRow[];
  images: ImageRow[];
  files: FileRow[];
}

/** Reads a record and its embeds in one round trip; null when no record of this kind has the id. */
export async function readDetail(svc: Pick<Services, "db">, id: number, kind: RecordKind): Promise<RecordDetail | null> {
  const [rows, bom, components, videos, images, files] = await batchRows<[RecordRow, BomRow, RecordRow, VideoRow, ImageRow, FileRow]>(
    svc.db,
    renderedDetail[kind]({ id }) as [RenderedSql, RenderedSql, RenderedSql, RenderedSql, RenderedSql, RenderedSql],
  );
  const row = rows[0];
  return row ? { row, bom, components, videos: kind === "product" ? videos : [], images, files } : null;
}

/** Who owns a record of this kind and how deep it sits; null when there is none. */
export async function readOwnership(
  svc: Pick<Services, "db">,
  id: number,
  kind: RecordKind,
): Promise<{ ownerId: number; depth: number } | null> {
  const rows = await svc.db.all<{ owner_id: number; depth: number }>(
    // Raw: the kind rule (`kindCondition`) is written once, in SQL over `p`.
    sql`SELECT p.owner_id, p.depth FROM products p WHERE p.id = ${id} AND ${kindCondition(kind)}`,
  );
  return rows[0] ? { ownerId: rows[0].owner_id, depth: rows[0].depth } : null;
}

/** A record about to be deleted: its owner, and how many records its deletion removes (itself and everything under it). */
export interface DeletionTarget {
  ownerId: number;
  /** Counted up to `limit` + 1: a bounded read. */
  records: number;
}

/**
 * Who owns a record of this kind and how many records go with it, counted up to `limit` + 1 by a
 * walk down its tree that stops there; null when there is no such record.
 */
export async function readDeletionTarget(
  svc: Pick<Services, "db">,
  id: number,
  kind: RecordKind,
  limit: number,
): Promise<DeletionTarget | null> {
  const rows = await svc.db.all<{ owner_id: number; records: number }>(
    // Raw: a recursive walk down the tree, stopped by its own LIMIT.
    sql`SELECT p.owner_id, (WITH RECURSIVE sub(id) AS (SELECT p.id UNION ALL SELECT c.id FROM products c JOIN sub ON c.parent_id = sub.id LIMIT ${limit + 1})
        SELECT count(*) FROM sub) AS records
      FROM products p WHERE p.id = ${id} AND ${kindCondition(kind)}`,
  );
  return rows[0] ? { ownerId: rows[0].owner_id, records: rows[0].records } : null;
}

/** Storage keys of the media a deletion removed, by kind, for the objects to be purged. */
export type RemovedMediaKeys = Record<"images" | "files", string[]>;

/**
 * Deletes a record with everything under it (components, bills of materials, videos and media
 * rows follow by foreign-key cascade) and releases the media's size from the owner's quota (not
 * for rejected media, which released it when rejected), in one batch. Then the objects of the
 * media removed are queued for purging (unless other rows share them) and `records.deleted` is
 * published, for the plugins to clean up what they keep about the record (a camera streaming into
 * it, say).
 *
 * A record with more records under it than one slice removes (`target.records`, from
 * `readDeletionTarget`) is hidden instead, in one small batch, and removed by a deletion job on
 * the queue (src/services/deletions/jobs.ts), which does the same in slices and publishes the
 * event at the end: from this call on, no read finds it or anything under it.
 */
export async function deleteRecord(
  svc: Pick<Services, "db" | "bindings" | "log" | "events" | "config">,
  id: number,
  kind: RecordKind,
  target: DeletionTarget,
): Promise<void> {
  if (target.records > svc.config.deletionSliceRecords) {
    const jobId = newJobId();
    const [started] = await batchRows<[{ id: string }, unknown, unknown]>(
      svc.db,
      recordJobStatements(jobId, id, target.ownerId, kindCondition(kind)) as [SQL, SQL, SQL],
    );
    // Nothing started when a deletion racing this one hid the record first.
    if (started.length > 0) await startDeletionJob(svc, jobId, { kind: "record", record_id: id, user_id: target.ownerId });
    return;
  }
  // Raw: the tree is a recursive CTE, shared by the media read and the quota release.
  const tree = sql`WITH RECURSIVE tree(id) AS (SELECT ${id} UNION ALL SELECT p.id FROM products p JOIN tree t ON p.parent_id = t.id),
    tree_media(kind, storage_key, size_bytes, charged) AS (
      SELECT 'images', storage_key, size_bytes, status <> 'rejected' FROM images WHERE product_id IN (SELECT id FROM tree)
      UNION ALL SELECT 'files', storage_key, size_bytes, status <> 'rejected' FROM files WHERE product_id IN (SELECT id FROM tree))`;
  const [media] = await batchRows<[{ kind: "images" | "files"; storage_key: string }, unknown, unknown]>(svc.db, [
    sql`${tree} SELECT DISTINCT kind, storage_key FROM tree_media`,
    sql`${tree} UPDATE users SET
          upload_file_count = max(upload_file_count - (SELECT count(*) FROM tree_media WHERE charged), 0),
          upload_total_bytes = max(upload_total_bytes - (SELECT coalesce(sum(size_bytes), 0) FROM tree_media WHERE charged), 0)
        WHERE id = (SELECT owner_id FROM products WHERE id = ${id})`,
    svc.db.delete(products).where(eq(products.id, id)),
  ]);
  const removed: RemovedMediaKeys = { images: [], files: [] };
  for (const row of media) removed[row.kind].push(row.storage_key);
  await queuePurge(svc, removed);
  await svc.events.publish({ type: "records.deleted", ids: [id] });
}
