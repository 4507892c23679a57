import { type SQL, sql } from "drizzle-orm";
import { batchRows, type Db } from "../db/client";
import { type AuditEvent, audit } from "../lib/audit";
import type { Logger } from "../lib/logger";
import { ApiError, type FieldError, notFound } from "../lib/problem";
import { dropNamespace } from "./cache";
import type { SessionUser } from "./sessions";

/**
 * What materials and product types share: links to categories (`material_categories`,
 * `product_type_categories`), ordering, and the bookkeeping of an admin write. One
 * implementation, parameterised by a `LinkedKind` that names the tables.
 */

/** What an admin write needs: the database, the KV cache to clear and the log to audit to. */
export interface ReferenceDeps {
  db: Db;
  kv: KVNamespace;
  log: Logger;
}

/** A category as a linked record embeds it. */
export interface LinkedCategoryRow {
  id: number;
  name: string;
  taxonomy_id: number;
}

/** A record kind that links to categories, and how to read one of its records. */
export interface LinkedKind {
  /** The `kind` of audit lines. */
  kind: "material" | "product_type";
  table: "materials" | "product_types";
  linkTable: "material_categories" | "product_type_categories";
  /** The link table's column naming the record. */
  ownerColumn: "material_id" | "product_type_id";
  /** The record's row, by id (no row when there is none). */
  recordStatement: (id: number) => SQL;
  /** The kind's 404. */
  missing: () => ApiError;
}

/** A record with the categories it is linked to. */
export interface LinkedRecord<Row> {
  row: Row;
  categories: LinkedCategoryRow[];
}

/** The categories linked to one record, by name. */
export function linkedCategoriesStatement(kind: LinkedKind, id: number): SQL {
  return sql`SELECT c.id, c.name, c.taxonomy_id FROM ${sql.raw(kind.linkTable)} l JOIN categories c ON c.id = l.category_id
    WHERE l.${sql.raw(kind.ownerColumn)} = ${id} ORDER BY c.name COLLATE NOCASE, c.id`;
}

/** Condition for a list: the record whose id is `ownerId` (an SQL column) is linked to `categoryId` itself (not to a subcategory). */
export function linkedToCategory(kind: LinkedKind, ownerId: SQL, categoryId: number): SQL {
  return sql`EXISTS (SELECT 1 FROM ${sql.raw(kind.linkTable)} l WHERE l.${sql.raw(kind.ownerColumn)} = ${ownerId} AND l.category_id = ${categoryId})`;
}

/** A record (its row typed `Row` by the caller) and its categories in one round trip; the kind's 404 when there is no such record. */
export async function readLinkedRecord<Row>(db: Db, kind: LinkedKind, id: number): Promise<LinkedRecord<Row>> {
  const [rows, categories] = await batchRows<[Row, LinkedCategoryRow]>(db, [kind.recordStatement(id), linkedCategoriesStatement(kind, id)]);
  if (!rows[0]) throw kind.missing();
  return { row: rows[0], categories };
}

/**
 * Links a record to categories, keeping links it already has, in one atomic round trip: the
 * insert runs only when the record exists and every category does, so a refused request writes
 * nothing. Unknown categories are 422, each pointed at (`/category_ids/<i>`).
 */
export async function addCategoryLinks<Row>(
  deps: ReferenceDeps,
  actor: SessionUser,
  kind: LinkedKind,
  id: number,
  categoryIds: readonly number[],
): Promise<LinkedRecord<Row>> {
  const list = JSON.stringify(categoryIds);
  const unknown = sql`SELECT j.key AS position FROM json_each(${list}) j WHERE NOT EXISTS (SELECT 1 FROM categories c WHERE c.id = j.value)`;
  const [missingCategories, added, rows, categories] = await batchRows<[{ position: number }, { category_id: number }, Row, LinkedCategoryRow]>(
    deps.db,
    [
      unknown,
      sql`INSERT OR IGNORE INTO ${sql.raw(kind.linkTable)} (${sql.raw(kind.ownerColumn)}, category_id)
        SELECT ${id}, j.value FROM json_each(${list}) j
        WHERE EXISTS (SELECT 1 FROM ${sql.raw(kind.table)} WHERE id = ${id}) AND NOT EXISTS (${unknown})
        RETURNING category_id`,
      kind.recordStatement(id),
      linkedCategoriesStatement(kind, id),
    ],
  );
  if (!rows[0]) throw kind.missing();
  if (missingCategories.length > 0) {
    const errors: FieldError[] = missingCategories.map(({ position }) => ({ pointer: `/category_ids/${position}`, detail: "No category has this id." }));
    throw new ApiError(422, { code: "VALIDATION_FAILED", detail: "The request names records that do not exist.", errors });
  }
  const addedIds = [...new Set(added.map((row) => row.category_id))];
  await referenceWritten(deps, actor, "admin.reference.updated", kind, id, { categories_added: addedIds });
  return { row: rows[0], categories };
}

/** Removes one link; the kind's 404 for an unknown record, 404 `CATEGORY_LINK_NOT_FOUND` when the two are not linked. */
export async function removeCategoryLink(
  deps: ReferenceDeps,
  actor: SessionUser,
  kind: LinkedKind,
  id: number,
  categoryId: number,
): Promise<void> {
  const [rows, removed] = await batchRows<[{ id: number }, { category_id: number }]>(deps.db, [
    sql`SELECT id FROM ${sql.raw(kind.table)} WHERE id = ${id}`,
    sql`DELETE FROM ${sql.raw(kind.linkTable)} WHERE ${sql.raw(kind.ownerColumn)} = ${id} AND category_id = ${categoryId} RETURNING category_id`,
  ]);
  if (!rows[0]) throw kind.missing();
  if (!removed[0]) throw notFound(`This record is not linked to category ${categoryId}.`, "CATEGORY_LINK_NOT_FOUND");
  await referenceWritten(deps, actor, "admin.reference.updated", kind, id, { categories_removed: [categoryId] });
}

/**
 * After a committed admin write: the audit line, then the cleared `reference-data` cache, so the
 * answer only leaves once no cached read can contradict it.
 */
export async function referenceWritten(
  deps: ReferenceDeps,
  actor: SessionUser,
  event: Extract<AuditEvent, `admin.reference.${string}`>,
  kind: LinkedKind,
  id: number,
  extra: Record<string, unknown> = {},
): Promise<void> {
  audit(deps.log, event, { actor_id: actor.id, kind: kind.kind, id, ...extra });
  await dropNamespace(deps.kv, "reference-data");
}

/** One sort term of a reference list. */
export interface OrderTerm<Field extends string> {
  field: Field;
  descending: boolean;
}

/** A sortable column; nullable ones sort their nulls last in both directions. */
export interface OrderColumn {
  expr: SQL;
  nullable: boolean;
}

/** `ORDER BY` of a list: the terms, then `id` to break ties (unless a term already orders by it). */
export function orderClause<Field extends string>(terms: readonly OrderTerm<Field>[], columns: Record<Field, OrderColumn>, id: SQL): SQL {
  const parts = terms.flatMap(({ field, descending }) => {
    const { expr, nullable } = columns[field];
    const direction = descending ? sql.raw("DESC") : sql.raw("ASC");
    return nullable ? [sql`(${expr} IS NULL)`, sql`${expr} ${direction}`] : [sql`${expr} ${direction}`];
  });
  if (!terms.some((term) => term.field === "id")) parts.push(sql`${id} ASC`);
  return sql`ORDER BY ${sql.join(parts, sql`, `)}`;
}

/** 409 `<KIND>_NAME_TAKEN` when `error` is the unique name index of `table` refusing a write; null otherwise. */
export function nameTaken(error: unknown, table: "materials" | "product_types", code: string, what: string): ApiError | null {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e.message.includes(`UNIQUE constraint failed: ${table}.name`)) {
      return new ApiError(409, { code, detail: `Another ${what} already has this name.` });
    }
  }
  return null;
}
