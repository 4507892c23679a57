import { type SQL, sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { FILE_FIELDS, IMAGE_FIELDS, MEDIA_ORDER, SHOWN_MEDIA_CONDITION } from "../media/records";
import { type ProductExportCursor, type ProductFilter, productExportRoot, productExportRootOrder, productExportRoots } from "./query";
import { RECORD_COLUMNS, RECORD_JOINS, type RecordRow } from "./records";

/**
 * Reads for `GET /v1/products/export` and `GET /v1/products/{id}/export` (decisions.md,
 * Exports; docs/exports.md). The export is read in chunks of base products: each chunk is ONE
 * statement that picks the next base products of the list (keyset, `productExportRoots`), walks
 * every component below them with a recursive CTE, and returns every record depth first, each
 * with its media (and, for JSON, its bill of materials and videos) folded into JSON columns by
 * correlated subqueries over their indexes. So a chunk costs one D1 round trip whatever its size,
 * and the Worker never holds more than one chunk.
 */

export const EXPORT_FORMATS = ["csv", "json"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Base products per chunk: enough to keep round trips few, small enough to keep a chunk's rows (and memory) modest. */
export const EXPORT_CHUNK_PRODUCTS = 100;

/** What to export: the list's matches, or one base product. */
export type ExportScope = { filter: ProductFilter; viewerId: number | null } | { productId: number };

/**
 * A record as the export reads it: the detail read's columns, the position of its base product
 * in the chunk (`root_ord`, 1-based) and its media as JSON text. `images_json` is always read
 * (the CSV needs the URLs); the other JSON columns only for the JSON format, null otherwise.
 */
export interface ExportRow extends RecordRow {
  root_ord: number;
  images_json: string;
  files_json: string | null;
  bom_json: string | null;
  videos_json: string | null;
}

/** A base product's row with the rows of all its components, depth first, components of a parent by id. */
export type ExportTree = ExportRow[];

/** `json_group_array` of `fields` over the rows `from` selects (in its order), as one text column. */
function jsonArrayOf(fields: readonly string[], from: string): string {
  return `(SELECT json_group_array(json_object(${fields.map((field) => `'${field}', ${field}`).join(", ")})) FROM (${from}))`;
}

const IMAGES_JSON = sql.raw(
  jsonArrayOf(
    IMAGE_FIELDS,
    `SELECT ${IMAGE_FIELDS.join(", ")} FROM images WHERE product_id = p.id AND ${SHOWN_MEDIA_CONDITION} ORDER BY ${MEDIA_ORDER}`,
  ),
);

const FILES_JSON = sql.raw(
  jsonArrayOf(
    FILE_FIELDS,
    `SELECT ${FILE_FIELDS.join(", ")} FROM files WHERE product_id = p.id AND ${SHOWN_MEDIA_CONDITION} ORDER BY ${MEDIA_ORDER}`,
  ),
);

const BOM_FIELDS = ["material_id", "material_name", "quantity", "unit"] as const;
const VIDEO_FIELDS = ["id", "url", "title", "description", "video_metadata", "created_at"] as const;

// In the detail read's orders: materials by name, then id; videos by id (integer ids, in creation order).
const BOM_JSON = sql.raw(
  jsonArrayOf(
    BOM_FIELDS,
    `SELECT b.material_id, m.name AS material_name, b.quantity, b.unit
    FROM bill_of_materials b JOIN materials m ON m.id = b.material_id WHERE b.product_id = p.id ORDER BY m.name, b.material_id`,
  ),
);

const VIDEOS_JSON = sql.raw(
  `CASE WHEN p.parent_id IS NULL THEN ${jsonArrayOf(VIDEO_FIELDS, `SELECT ${VIDEO_FIELDS.join(", ")} FROM videos WHERE product_id = p.id ORDER BY id`)} END`,
);

/**
 * The statement of one chunk: the base products `roots` selects (a `productExportRoots` or
 * `productExportRoot` sub-select), ordered again by `rootOrder` (over alias `c`), each followed
 * by its components at every depth. Depth first: each record's sort path is its ancestors' ids
 * below the base product, zero-padded, so a plain text order of the paths is a pre-order walk.
 * `CROSS JOIN` keeps the planner from scanning `products` and probing the tree.
 */
export function exportChunkStatement(roots: SQL, rootOrder: SQL, format: ExportFormat): SQL {
  const jsonOnly = (column: SQL) => (format === "json" ? column : sql.raw("NULL"));
  // Raw: each root's whole tree by a recursive walk, with its media and materials as JSON, in one statement.
  return sql`WITH RECURSIVE
      chunk AS (${roots}),
      roots AS (SELECT c.id, row_number() OVER (ORDER BY ${rootOrder}) AS ord FROM chunk c),
      tree(id, ord, path) AS (
        SELECT id, ord, '' FROM roots
        UNION ALL
        SELECT k.id, tree.ord, tree.path || printf('%010d', k.id) FROM tree JOIN products k ON k.parent_id = tree.id
      )
    SELECT ${RECORD_COLUMNS}, tree.ord AS root_ord, ${IMAGES_JSON} AS images_json,
      ${jsonOnly(FILES_JSON)} AS files_json, ${jsonOnly(BOM_JSON)} AS bom_json, ${jsonOnly(VIDEOS_JSON)} AS videos_json
    FROM tree CROSS JOIN products p ON p.id = tree.id ${RECORD_JOINS}
    ORDER BY tree.ord, tree.path`;
}

/** Splits a chunk's rows (ordered by `root_ord`) into one tree per base product. */
function splitTrees(rows: ExportRow[]): ExportTree[] {
  const trees: ExportTree[] = [];
  for (const row of rows) {
    if (row.parent_id === null) trees.push([row]);
    else trees[trees.length - 1]?.push(row);
  }
  return trees;
}

/**
 * The export as chunks of whole trees, read one chunk per D1 round trip as the consumer asks
 * for them. The list export stops after a chunk with fewer than `chunkSize` base products; the
 * single-product export is one chunk (empty when the id is not a base product's). Stopping the
 * iteration (`return()`, as a cancelled stream does) stops the reads.
 */
export async function* exportChunks(
  svc: Pick<Services, "db">,
  scope: ExportScope,
  format: ExportFormat,
  chunkSize = EXPORT_CHUNK_PRODUCTS,
): AsyncGenerator<ExportTree[], void, undefined> {
  // Each chunk is a batch of one statement, so that what waits for the request's next batch (a
  // carried token check, `carryInNextBatch`) travels with the first chunk: still one round trip.
  const read = async (statement: SQL) => (await batchRows<[ExportRow]>(svc.db, [statement]))[0];
  if ("productId" in scope) {
    yield splitTrees(await read(exportChunkStatement(productExportRoot(scope.productId), sql.raw("c.id"), format)));
    return;
  }
  let after: ProductExportCursor | null = null;
  const rootOrder = productExportRootOrder(scope.filter);
  for (;;) {
    const roots = productExportRoots(scope.filter, scope.viewerId, after, chunkSize);
    const trees = splitTrees(await read(exportChunkStatement(roots, rootOrder, format)));
    if (trees.length > 0) yield trees;
    if (trees.length < chunkSize) return;
    after = trees[trees.length - 1]![0]!;
  }
}
