import { asc, eq, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import type { Row } from "../../db/rows";
import { categories, taxonomies } from "../../db/schema";
import { type PageQuery, pageWindow } from "../../lib/pagination";
import { ApiError, notFound } from "../../lib/problem";
import { type ListOrder, type OrderTerm, orderClause, type ReferenceOrderField, referenceOrderColumns } from "./order";
import {
  assignments,
  auditReferenceWrite,
  changedFields,
  deleteRow,
  nameContains,
  type ReferenceServices,
  recordTable,
  refusingDuplicates,
  rowStatement,
  updateStatement,
} from "./records";

/**
 * Categories: the paged lists, the detail, and the administrator's writes (docs/reference-data.md).
 * Every read and write costs one D1 round trip: existence checks travel in the same batch or
 * statement as the rows, and the rules of the tree (one taxonomy per tree, no cycles) are
 * conditions of the write itself, so no concurrent write can slip between a check and the write.
 */

const ORDER: ListOrder<ReferenceOrderField> = { columns: referenceOrderColumns("c"), ties: "as-last-term" };

/** A category as stored. */
export type CategoryRow = Row<typeof categories>;

const CATEGORIES = recordTable(categories, "c", [
  "id",
  "name",
  "description",
  "external_id",
  "taxonomy_id",
  "supercategory_id",
  "created_at",
  "updated_at",
]);

/** The list filters; absent members do not filter. */
export interface CategoryFilter {
  taxonomyId?: number;
  supercategoryId?: number;
  /** `true`: top-level categories only; `false`: subcategories only. */
  isRoot?: boolean;
  externalId?: string;
  nameIlike?: string;
  orderBy?: readonly OrderTerm<ReferenceOrderField>[];
}

/** The record a list is nested in, which must exist (404 otherwise). */
export interface CategoryParent {
  kind: "taxonomy" | "category";
  id: number;
}

export const categoryNotFound = () => notFound("No category has this id.", "CATEGORY_NOT_FOUND");

/** SQL: the parent exists. Raw: a condition inside the list's count statement (and the tree's). */
export function parentExists(parent: CategoryParent): SQL {
  return parent.kind === "taxonomy"
    ? sql`EXISTS (SELECT 1 FROM taxonomies WHERE id = ${parent.id})`
    : sql`EXISTS (SELECT 1 FROM categories WHERE id = ${parent.id})`;
}

function conditions(filter: CategoryFilter, parent: CategoryParent | undefined): SQL {
  const where: SQL[] = [];
  if (parent?.kind === "taxonomy") where.push(sql`c.taxonomy_id = ${parent.id}`);
  if (parent?.kind === "category") where.push(sql`c.supercategory_id = ${parent.id}`);
  if (filter.taxonomyId !== undefined) where.push(sql`c.taxonomy_id = ${filter.taxonomyId}`);
  if (filter.supercategoryId !== undefined) where.push(sql`c.supercategory_id = ${filter.supercategoryId}`);
  if (filter.isRoot !== undefined) where.push(filter.isRoot ? sql`c.supercategory_id IS NULL` : sql`c.supercategory_id IS NOT NULL`);
  if (filter.externalId !== undefined) where.push(sql`c.external_id = ${filter.externalId}`);
  if (filter.nameIlike !== undefined) where.push(nameContains(CATEGORIES, filter.nameIlike));
  return where.length === 0 ? sql`1` : sql.join(where, sql` AND `);
}

export interface CategoryPage {
  rows: CategoryRow[];
  total: number;
}

/**
 * One page of categories matching `filter` (within `parent` when given) and how many match, in
 * one round trip; null when the parent does not exist.
 */
export async function listCategories(svc: Pick<Services, "db">, filter: CategoryFilter, page: PageQuery): Promise<CategoryPage>;
export async function listCategories(
  svc: Pick<Services, "db">,
  filter: CategoryFilter,
  page: PageQuery,
  parent: CategoryParent,
): Promise<CategoryPage | null>;
export async function listCategories(
  svc: Pick<Services, "db">,
  filter: CategoryFilter,
  page: PageQuery,
  parent?: CategoryParent,
): Promise<CategoryPage | null> {
  const where = conditions(filter, parent);
  const { limit, offset } = pageWindow(page);
  const found = parent ? parentExists(parent) : sql`1`;
  // Raw: the filters and sort terms are SQL over the alias `c` (as `listPage` in records.ts), and the count row says whether the parent exists.
  const [rows, counted] = await batchRows<[CategoryRow, { total: number; found: number }]>(svc.db, [
    sql`SELECT ${CATEGORIES.columns} FROM categories c WHERE ${where} ${orderClause(filter.orderBy, ORDER)} LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT (SELECT count(*) FROM categories c WHERE ${where}) AS total, ${found} AS found`,
  ]);
  const summary = counted[0];
  if (!summary?.found) return null;
  return { rows, total: summary.total };
}

/** A category with the names of its taxonomy and supercategory, and its direct subcategories. */
export interface CategoryDetail {
  row: CategoryRow & { taxonomy_name: string; supercategory_name: string | null };
  subcategories: { id: number; name: string }[];
}

const supercategories = alias(categories, "s");

/** One category with what its detail embeds, in one round trip; null when there is none. */
export async function readCategory(svc: Pick<Services, "db">, id: number): Promise<CategoryDetail | null> {
  const [rows, subcategories] = await batchRows<[CategoryDetail["row"], { id: number; name: string }]>(svc.db, [
    svc.db
      .select({
        ...CATEGORIES.fields,
        taxonomy_name: sql<string>`${taxonomies.name}`.as("taxonomy_name"),
        supercategory_name: sql<string | null>`${supercategories.name}`.as("supercategory_name"),
      })
      .from(categories)
      .innerJoin(taxonomies, eq(taxonomies.id, categories.taxonomy_id))
      .leftJoin(supercategories, eq(supercategories.id, categories.supercategory_id))
      .where(eq(categories.id, id)),
    svc.db
      .select({ id: categories.id, name: categories.name })
      .from(categories)
      .where(eq(categories.supercategory_id, id))
      .orderBy(sql`${categories.name} COLLATE NOCASE`, asc(categories.id)),
  ]);
  return rows[0] ? { row: rows[0], subcategories } : null;
}

/** A new category: at the top of `taxonomy_id`, or below `supercategory_id` (exactly one; the body schema sees to it). */
export interface CategoryCreate {
  name: string;
  description?: string | null | undefined;
  external_id?: string | null | undefined;
  taxonomy_id?: number | undefined;
  supercategory_id?: number | undefined;
}

/** What a PATCH may change; `supercategory_id: null` moves the category to the top of its taxonomy. */
export interface CategoryChanges {
  name?: string | undefined;
  description?: string | null | undefined;
  external_id?: string | null | undefined;
  supercategory_id?: number | null | undefined;
}

const unknownReference = (pointer: string, what: string) =>
  new ApiError(422, {
    code: "VALIDATION_FAILED",
    detail: "The request names records that do not exist.",
    errors: [{ pointer, detail: `No ${what} has this id.` }],
  });

const externalIdTaken = () =>
  new ApiError(409, { code: "CATEGORY_EXTERNAL_ID_TAKEN", detail: "Another category of this taxonomy has this external_id." });

const cycle = () =>
  new ApiError(400, {
    code: "CATEGORY_CYCLE",
    detail: "A category cannot be moved below itself or one of its own subcategories.",
  });

const taxonomyMismatch = () =>
  new ApiError(400, {
    code: "CATEGORY_TAXONOMY_MISMATCH",
    detail: "The supercategory belongs to another taxonomy; a category moves only within its own.",
  });

const writing = <T>(write: () => Promise<T>) =>
  refusingDuplicates("categories.taxonomy_id, categories.external_id", externalIdTaken, write);

/**
 * Creates a category in one statement: the INSERT selects its taxonomy from the taxonomy or the
 * supercategory it names, so an unknown one inserts nothing (422) and a subcategory always takes
 * its supercategory's taxonomy.
 */
export async function createCategory(svc: ReferenceServices, actor: SessionUser, input: CategoryCreate): Promise<CategoryRow> {
  const own = sql`${input.name}, ${input.description ?? null}, ${input.external_id ?? null}`;
  const source =
    input.supercategory_id !== undefined
      ? sql`SELECT ${own}, s.taxonomy_id, s.id FROM categories s WHERE s.id = ${input.supercategory_id}`
      : sql`SELECT ${own}, t.id, NULL FROM taxonomies t WHERE t.id = ${input.taxonomy_id ?? 0}`;
  const [rows] = await writing(() =>
    batchRows<[CategoryRow]>(svc.db, [
      // Raw: INSERT … SELECT, so the taxonomy or supercategory it names must exist for the row to go in.
      sql`INSERT INTO categories (name, description, external_id, taxonomy_id, supercategory_id) ${source} RETURNING ${CATEGORIES.returned}`,
    ]),
  );
  const row = rows[0];
  if (!row) {
    throw input.supercategory_id !== undefined
      ? unknownReference("/supercategory_id", "category")
      : unknownReference("/taxonomy_id", "taxonomy");
  }
  auditReferenceWrite(svc, actor, "admin.reference.created", "category", row.id);
  return row;
}

/**
 * SQL: category `id` is `target` or one of its ancestors, i.e. moving `id` below `target` would
 * close a cycle. Walks up from `target` (one row per level, by primary key); `UNION` rather than
 * `UNION ALL` ends the walk even on a tree that is already broken.
 */
function closesCycle(id: number, target: number): SQL {
  return sql`EXISTS (
    WITH RECURSIVE up(id) AS (
      SELECT ${target}
      UNION
      SELECT a.supercategory_id FROM categories a JOIN up ON a.id = up.id WHERE a.supercategory_id IS NOT NULL
    )
    SELECT 1 FROM up WHERE up.id = ${id}
  )`;
}

const CHANGE_COLUMNS = ["name", "description", "external_id", "supercategory_id"] as const;

/**
 * Applies an administrator's changes in one batch. A move below another category is a condition
 * of the UPDATE itself (the target is in the same taxonomy and is neither the category nor below
 * it), so two concurrent moves cannot build a cycle between them. When the UPDATE refuses, the
 * diagnosis read just before it in the same transaction says why.
 */
export async function updateCategory(
  svc: ReferenceServices,
  actor: SessionUser,
  id: number,
  changes: CategoryChanges,
): Promise<CategoryRow> {
  const set = assignments(CHANGE_COLUMNS, changes);
  const current = rowStatement(svc.db, CATEGORIES, id);
  if (set.length === 0) {
    const [rows] = await batchRows<[CategoryRow]>(svc.db, [current]);
    if (!rows[0]) throw categoryNotFound();
    auditReferenceWrite(svc, actor, "admin.reference.updated", "category", id, { fields: [] });
    return rows[0];
  }

  const target = typeof changes.supercategory_id === "number" ? changes.supercategory_id : null;
  const guard =
    target === null
      ? sql``
      : sql`AND EXISTS (SELECT 1 FROM categories s WHERE s.id = ${target} AND s.taxonomy_id = categories.taxonomy_id)
          AND NOT ${closesCycle(id, target)}`;
  // Raw: a recursive CTE (`closesCycle`); the placeholder keeps the batch's shape when nothing moves.
  const diagnosis =
    target === null
      ? sql`SELECT NULL AS taxonomy_id, 0 AS cyclic WHERE 0`
      : sql`SELECT s.taxonomy_id, ${closesCycle(id, target)} AS cyclic FROM categories s WHERE s.id = ${target}`;
  const [before, found, updated] = await writing(() =>
    batchRows<[CategoryRow, { taxonomy_id: number; cyclic: number }, CategoryRow]>(svc.db, [
      current,
      diagnosis,
      updateStatement(CATEGORIES, id, set, guard),
    ]),
  );
  const old = before[0];
  if (!old) throw categoryNotFound();
  const now = updated[0];
  if (!now) {
    const reason = found[0];
    if (!reason) throw unknownReference("/supercategory_id", "category");
    if (reason.cyclic) throw cycle();
    throw taxonomyMismatch();
  }
  auditReferenceWrite(svc, actor, "admin.reference.updated", "category", id, { fields: changedFields(CHANGE_COLUMNS, old, now) });
  return now;
}

/** Deletes a category; its subtree and its links to materials and product types go with it (ON DELETE CASCADE). */
export async function deleteCategory(svc: ReferenceServices, actor: SessionUser, id: number): Promise<void> {
  if (!(await deleteRow(svc, CATEGORIES, id))) throw categoryNotFound();
  auditReferenceWrite(svc, actor, "admin.reference.deleted", "category", id);
}
