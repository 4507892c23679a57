import { type SQL, sql } from "drizzle-orm";
import { batchRows, type Db } from "../db/client";
import { notFound } from "../lib/problem";
import { type PageQuery, pageWindow } from "../lib/pagination";
import {
  addCategoryLinks,
  type LinkedCategoryRow,
  type LinkedKind,
  type LinkedRecord,
  linkedCategoriesStatement,
  linkedToCategory,
  nameTaken,
  type OrderColumn,
  type OrderTerm,
  orderClause,
  readLinkedRecord,
  type ReferenceDeps,
  referenceWritten,
  removeCategoryLink,
} from "./category-links";
import { likeContains } from "./product-query";
import type { SessionUser } from "./sessions";

export interface ProductTypeRow {
  id: number;
  name: string;
  description: string | null;
  created_at: number;
  updated_at: number;
}

export type ProductTypeDetail = LinkedRecord<ProductTypeRow>;

export const PRODUCT_TYPE_ORDER_FIELDS = ["name", "id", "created_at"] as const;
export type ProductTypeOrderField = (typeof PRODUCT_TYPE_ORDER_FIELDS)[number];

/** The list's filters in plain values; absent members do not filter. */
export interface ProductTypeFilter {
  nameIlike?: string;
  /** Only product types linked to this category itself. */
  categoryId?: number;
  /** `+name` when absent or empty. */
  orderBy?: readonly OrderTerm<ProductTypeOrderField>[];
}

const COLUMNS = sql.raw("t.id, t.name, t.description, t.created_at, t.updated_at");
// RETURNING takes unqualified names.
const RETURNED = sql.raw("id, name, description, created_at, updated_at");

const ORDER_COLUMNS: Record<ProductTypeOrderField, OrderColumn> = {
  name: { expr: sql.raw("t.name COLLATE NOCASE"), nullable: false },
  id: { expr: sql.raw("t.id"), nullable: false },
  created_at: { expr: sql.raw("t.created_at"), nullable: false },
};

const DEFAULT_ORDER: readonly OrderTerm<ProductTypeOrderField>[] = [{ field: "name", descending: false }];

export const PRODUCT_TYPE: LinkedKind = {
  kind: "product_type",
  table: "product_types",
  linkTable: "product_type_categories",
  ownerColumn: "product_type_id",
  recordStatement: (id) => sql`SELECT ${COLUMNS} FROM product_types t WHERE t.id = ${id}`,
  missing: () => notFound("No product type has this id.", "PRODUCT_TYPE_NOT_FOUND"),
};

function conditions(filter: ProductTypeFilter): SQL {
  const where: SQL[] = [sql`1`];
  if (filter.nameIlike !== undefined) where.push(sql`t.name LIKE ${likeContains(filter.nameIlike)} ESCAPE '\\'`);
  if (filter.categoryId !== undefined) where.push(linkedToCategory(PRODUCT_TYPE, sql.raw("t.id"), filter.categoryId));
  return sql.join(where, sql` AND `);
}

/** One page of product types and how many match, in one round trip. */
export async function listProductTypes(db: Db, filter: ProductTypeFilter, page: PageQuery): Promise<{ rows: ProductTypeRow[]; total: number }> {
  const where = conditions(filter);
  const order = orderClause(filter.orderBy?.length ? filter.orderBy : DEFAULT_ORDER, ORDER_COLUMNS, sql.raw("t.id"));
  const { limit, offset } = pageWindow(page);
  const [rows, counted] = await batchRows<[ProductTypeRow, { total: number }]>(db, [
    sql`SELECT ${COLUMNS} FROM product_types t WHERE ${where} ${order} LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT count(*) AS total FROM product_types t WHERE ${where}`,
  ]);
  return { rows, total: counted[0]?.total ?? 0 };
}

/** A product type with its categories, in one round trip; 404 `PRODUCT_TYPE_NOT_FOUND`. */
export function readProductType(db: Db, id: number): Promise<ProductTypeDetail> {
  return readLinkedRecord<ProductTypeRow>(db, PRODUCT_TYPE, id);
}

export interface ProductTypeValues {
  name: string;
  description?: string | null | undefined;
}

export type ProductTypeChanges = Partial<ProductTypeValues>;

const taken = (error: unknown) => nameTaken(error, "product_types", "PRODUCT_TYPE_NAME_TAKEN", "product type");

/** Creates a product type (no categories yet); 409 `PRODUCT_TYPE_NAME_TAKEN` for a name in use. */
export async function createProductType(deps: ReferenceDeps, actor: SessionUser, values: ProductTypeValues): Promise<ProductTypeDetail> {
  let rows: ProductTypeRow[];
  try {
    [rows] = await batchRows<[ProductTypeRow]>(deps.db, [
      sql`INSERT INTO product_types (name, description) VALUES (${values.name}, ${values.description ?? null}) RETURNING ${RETURNED}`,
    ]);
  } catch (error) {
    throw taken(error) ?? error;
  }
  const row = rows[0]!;
  await referenceWritten(deps, actor, "admin.reference.created", PRODUCT_TYPE, row.id);
  return { row, categories: [] };
}

const CHANGE_COLUMNS = ["name", "description"] as const;

/**
 * Applies the given members in one round trip with the type's categories; `updated_at` moves
 * only when a value really changes. 404 for an unknown id, 409 for a name in use.
 */
export async function updateProductType(
  deps: ReferenceDeps,
  actor: SessionUser,
  id: number,
  changes: ProductTypeChanges,
): Promise<ProductTypeDetail> {
  const values = CHANGE_COLUMNS.flatMap((column) => (changes[column] === undefined ? [] : [{ column: sql.raw(column), value: changes[column] }]));
  if (values.length === 0) {
    const detail = await readProductType(deps.db, id);
    await referenceWritten(deps, actor, "admin.reference.updated", PRODUCT_TYPE, id, { fields: [] });
    return detail;
  }
  const sets = sql.join(values.map(({ column, value }) => sql`${column} = ${value}`), sql`, `);
  const differs = sql.join(values.map(({ column, value }) => sql`${column} IS NOT ${value}`), sql` OR `);
  let before: ProductTypeRow[];
  let rows: ProductTypeRow[];
  let categories: LinkedCategoryRow[];
  // The row before the change comes in the same batch, so the audit names what really changed.
  try {
    [before, rows, categories] = await batchRows<[ProductTypeRow, ProductTypeRow, LinkedCategoryRow]>(deps.db, [
      PRODUCT_TYPE.recordStatement(id),
      sql`UPDATE product_types SET ${sets}, updated_at = CASE WHEN ${differs} THEN unixepoch() ELSE updated_at END
        WHERE id = ${id} RETURNING ${RETURNED}`,
      linkedCategoriesStatement(PRODUCT_TYPE, id),
    ]);
  } catch (error) {
    throw taken(error) ?? error;
  }
  if (!rows[0] || !before[0]) throw PRODUCT_TYPE.missing();
  const [old, now] = [before[0], rows[0]];
  await referenceWritten(deps, actor, "admin.reference.updated", PRODUCT_TYPE, id, { fields: CHANGE_COLUMNS.filter((c) => old[c] !== now[c]) });
  return { row: rows[0], categories };
}

/** Deletes a product type with its category links; its products keep existing without a type (the foreign key sets it to null). */
export async function deleteProductType(deps: ReferenceDeps, actor: SessionUser, id: number): Promise<void> {
  const [deleted] = await batchRows<[{ id: number }]>(deps.db, [sql`DELETE FROM product_types WHERE id = ${id} RETURNING id`]);
  if (!deleted[0]) throw PRODUCT_TYPE.missing();
  await referenceWritten(deps, actor, "admin.reference.deleted", PRODUCT_TYPE, id);
}

export function linkProductTypeCategories(
  deps: ReferenceDeps,
  actor: SessionUser,
  id: number,
  categoryIds: readonly number[],
): Promise<ProductTypeDetail> {
  return addCategoryLinks<ProductTypeRow>(deps, actor, PRODUCT_TYPE, id, categoryIds);
}

export function unlinkProductTypeCategory(deps: ReferenceDeps, actor: SessionUser, id: number, categoryId: number): Promise<void> {
  return removeCategoryLink(deps, actor, PRODUCT_TYPE, id, categoryId);
}
