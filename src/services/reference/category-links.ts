import { and, asc, eq, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import type { AnySQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows, type Db } from "../../db/client";
import { columnsOf, type RowOf } from "../../db/rows";
import { categories } from "../../db/schema";
import { ApiError, type FieldError, notFound } from "../../lib/problem";
import {
  type Assignment,
  changedFields,
  insertStatement,
  type RecordTable,
  type ReferenceServices,
  referenceWritten,
  refusingDuplicates,
  rowStatement,
  updateStatement,
} from "./records";

/**
 * What materials and product types share: links to categories (`material_categories`,
 * `product_type_categories`), and reads and writes that answer a record with its categories.
 * One implementation, parameterised by a `LinkedKind` that names the tables.
 */

/** A category as a linked record embeds it. */
export type LinkedCategoryRow = RowOf<typeof categories, "id" | "name" | "taxonomy_id">;

/** A link table of the schema, with its column naming the record (`owner`) and the one naming the category. */
export interface LinkTable {
  table: SQLiteTable;
  owner: AnySQLiteColumn;
  category: AnySQLiteColumn;
}

/** A record kind that links to categories: its table, its link table, and what its writes refuse. */
export interface LinkedKind<Row> extends RecordTable {
  /** The `kind` of audit lines. */
  kind: "material" | "product_type";
  table: "materials" | "product_types";
  links: LinkTable;
  /** The columns a PATCH may change, which its audit line compares. */
  changeColumns: readonly (keyof Row & string)[];
  /** The kind's 404. */
  missing: () => ApiError;
  /** The kind's 409 for a name another record has (names are unique per kind). */
  nameTaken: () => ApiError;
}

/** A record with the categories it is linked to. */
export interface LinkedRecord<Row> {
  row: Row;
  categories: LinkedCategoryRow[];
}

/** The categories linked to one record, by name. */
export function linkedCategoriesStatement<Row>(db: Db, kind: LinkedKind<Row>, id: number): SQLWrapper {
  const { links } = kind;
  return db
    .select(columnsOf(categories, ["id", "name", "taxonomy_id"]))
    .from(links.table)
    .innerJoin(categories, eq(categories.id, links.category))
    .where(eq(links.owner, id))
    .orderBy(sql`${categories.name} COLLATE NOCASE`, asc(categories.id));
}

/** Condition for a list of `kind` (read under its alias): the record is linked to `categoryId` itself (not to a subcategory). */
export function linkedToCategory<Row>(kind: LinkedKind<Row>, categoryId: number): SQL {
  const ownerId = sql.raw(`${kind.alias}.id`);
  // Raw: a condition of the list's hand-written SQL, over the kind's alias.
  return sql`EXISTS (SELECT 1 FROM ${kind.links.table} l WHERE l.${sql.identifier(kind.links.owner.name)} = ${ownerId} AND l.category_id = ${categoryId})`;
}

/** A record and its categories in one round trip; the kind's 404 when there is no such record. */
export async function readLinkedRecord<Row>(svc: Pick<Services, "db">, kind: LinkedKind<Row>, id: number): Promise<LinkedRecord<Row>> {
  const [rows, categories] = await batchRows<[Row, LinkedCategoryRow]>(svc.db, [
    rowStatement(svc.db, kind, id),
    linkedCategoriesStatement(svc.db, kind, id),
  ]);
  if (!rows[0]) throw kind.missing();
  return { row: rows[0], categories };
}

const takenName = <Row>(kind: LinkedKind<Row>) => `${kind.table}.name`;

/** Creates a record from its column values (no categories yet); the kind's 409 for a name in use. */
export async function createLinkedRecord<Row extends { id: number }>(
  svc: ReferenceServices,
  actor: SessionUser,
  kind: LinkedKind<Row>,
  values: Record<string, unknown>,
): Promise<LinkedRecord<Row>> {
  const [rows] = await refusingDuplicates(takenName(kind), kind.nameTaken, () =>
    batchRows<[Row]>(svc.db, [insertStatement(svc.db, kind, values)]),
  );
  const row = rows[0]!;
  await referenceWritten(svc, actor, "admin.reference.created", kind.kind, row.id);
  return { row, categories: [] };
}

/**
 * Applies `set` in one round trip with the record's categories; `updated_at` moves only when a
 * value really changes. The kind's 404 for an unknown id, its 409 for a name in use.
 */
export async function updateLinkedRecord<Row>(
  svc: ReferenceServices,
  actor: SessionUser,
  kind: LinkedKind<Row>,
  id: number,
  set: readonly Assignment[],
): Promise<LinkedRecord<Row>> {
  if (set.length === 0) {
    const detail = await readLinkedRecord(svc, kind, id);
    await referenceWritten(svc, actor, "admin.reference.updated", kind.kind, id, { fields: [] });
    return detail;
  }
  // The row before the change comes in the same batch, so the audit names what really changed.
  const [before, rows, categories] = await refusingDuplicates(takenName(kind), kind.nameTaken, () =>
    batchRows<[Row, Row, LinkedCategoryRow]>(svc.db, [
      rowStatement(svc.db, kind, id),
      updateStatement(kind, id, set),
      linkedCategoriesStatement(svc.db, kind, id),
    ]),
  );
  const [old, now] = [before[0], rows[0]];
  if (!old || !now) throw kind.missing();
  await referenceWritten(svc, actor, "admin.reference.updated", kind.kind, id, { fields: changedFields(kind.changeColumns, old, now) });
  return { row: now, categories };
}

/**
 * Links a record to categories, keeping links it already has, in one atomic round trip: the
 * insert runs only when the record exists and every category does, so a refused request writes
 * nothing. Unknown categories are 422, each pointed at (`/category_ids/<i>`).
 */
export async function addCategoryLinks<Row>(
  svc: ReferenceServices,
  actor: SessionUser,
  kind: LinkedKind<Row>,
  id: number,
  categoryIds: readonly number[],
): Promise<LinkedRecord<Row>> {
  const list = JSON.stringify(categoryIds);
  // Raw: the positions of unknown ids, over JSON rows (json_each).
  const unknown = sql`SELECT j.key AS position FROM json_each(${list}) j WHERE NOT EXISTS (SELECT 1 FROM categories c WHERE c.id = j.value)`;
  const [missingCategories, added, rows, categories] = await batchRows<
    [{ position: number }, { category_id: number }, Row, LinkedCategoryRow]
  >(svc.db, [
    unknown,
    // Raw: one INSERT … SELECT over JSON rows (json_each), guarded by the record and every category existing.
    sql`INSERT OR IGNORE INTO ${kind.links.table} (${sql.identifier(kind.links.owner.name)}, category_id)
        SELECT ${id}, j.value FROM json_each(${list}) j
        WHERE EXISTS (SELECT 1 FROM ${kind.source} WHERE id = ${id}) AND NOT EXISTS (${unknown})
        RETURNING category_id`,
    rowStatement(svc.db, kind, id),
    linkedCategoriesStatement(svc.db, kind, id),
  ]);
  if (!rows[0]) throw kind.missing();
  if (missingCategories.length > 0) {
    const errors: FieldError[] = missingCategories.map(({ position }) => ({
      pointer: `/category_ids/${position}`,
      detail: "No category has this id.",
    }));
    throw new ApiError(422, { code: "VALIDATION_FAILED", detail: "The request names records that do not exist.", errors });
  }
  const addedIds = [...new Set(added.map((row) => row.category_id))];
  await referenceWritten(svc, actor, "admin.reference.updated", kind.kind, id, { categories_added: addedIds });
  return { row: rows[0], categories };
}

/** Removes one link; the kind's 404 for an unknown record, 404 `CATEGORY_LINK_NOT_FOUND` when the two are not linked. */
export async function removeCategoryLink<Row>(
  svc: ReferenceServices,
  actor: SessionUser,
  kind: LinkedKind<Row>,
  id: number,
  categoryId: number,
): Promise<void> {
  const { links } = kind;
  const [rows, removed] = await batchRows<[{ id: number }, { category_id: number }]>(svc.db, [
    svc.db.select({ id: kind.id }).from(kind.source).where(eq(kind.id, id)),
    svc.db
      .delete(links.table)
      .where(and(eq(links.owner, id), eq(links.category, categoryId)))
      .returning({ category_id: links.category }),
  ]);
  if (!rows[0]) throw kind.missing();
  if (!removed[0]) throw notFound(`This record is not linked to category ${categoryId}.`, "CATEGORY_LINK_NOT_FOUND");
  await referenceWritten(svc, actor, "admin.reference.updated", kind.kind, id, { categories_removed: [categoryId] });
}
