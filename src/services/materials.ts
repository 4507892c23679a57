import { type SQL, sql } from "drizzle-orm";
import { batchRows, type Db } from "../db/client";
import { ApiError, notFound } from "../lib/problem";
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

export interface MaterialRow {
  id: number;
  name: string;
  description: string | null;
  density_kg_m3: number | null;
  is_crm: number;
  created_at: number;
  updated_at: number;
}

export type MaterialDetail = LinkedRecord<MaterialRow>;

export const MATERIAL_ORDER_FIELDS = ["name", "id", "density_kg_m3", "created_at"] as const;
export type MaterialOrderField = (typeof MATERIAL_ORDER_FIELDS)[number];

/** The list's filters in plain values; absent members do not filter. */
export interface MaterialFilter {
  nameIlike?: string;
  isCrm?: boolean;
  density?: { ge?: number; le?: number };
  /** Only materials linked to this category itself. */
  categoryId?: number;
  /** `+name` when absent or empty. */
  orderBy?: readonly OrderTerm<MaterialOrderField>[];
}

const COLUMNS = sql.raw("m.id, m.name, m.description, m.density_kg_m3, m.is_crm, m.created_at, m.updated_at");
// RETURNING takes unqualified names.
const RETURNED = sql.raw("id, name, description, density_kg_m3, is_crm, created_at, updated_at");

const ORDER_COLUMNS: Record<MaterialOrderField, OrderColumn> = {
  name: { expr: sql.raw("m.name COLLATE NOCASE"), nullable: false },
  id: { expr: sql.raw("m.id"), nullable: false },
  density_kg_m3: { expr: sql.raw("m.density_kg_m3"), nullable: true },
  created_at: { expr: sql.raw("m.created_at"), nullable: false },
};

const DEFAULT_ORDER: readonly OrderTerm<MaterialOrderField>[] = [{ field: "name", descending: false }];

export const MATERIAL: LinkedKind = {
  kind: "material",
  table: "materials",
  linkTable: "material_categories",
  ownerColumn: "material_id",
  recordStatement: (id) => sql`SELECT ${COLUMNS} FROM materials m WHERE m.id = ${id}`,
  missing: () => notFound("No material has this id.", "MATERIAL_NOT_FOUND"),
};

function conditions(filter: MaterialFilter): SQL {
  const where: SQL[] = [sql`1`];
  if (filter.nameIlike !== undefined) where.push(sql`m.name LIKE ${likeContains(filter.nameIlike)} ESCAPE '\\'`);
  if (filter.isCrm !== undefined) where.push(sql`m.is_crm = ${filter.isCrm ? 1 : 0}`);
  if (filter.density?.ge !== undefined) where.push(sql`m.density_kg_m3 >= ${filter.density.ge}`);
  if (filter.density?.le !== undefined) where.push(sql`m.density_kg_m3 <= ${filter.density.le}`);
  if (filter.categoryId !== undefined) where.push(linkedToCategory(MATERIAL, sql.raw("m.id"), filter.categoryId));
  return sql.join(where, sql` AND `);
}

/** One page of materials and how many match, in one round trip. */
export async function listMaterials(db: Db, filter: MaterialFilter, page: PageQuery): Promise<{ rows: MaterialRow[]; total: number }> {
  const where = conditions(filter);
  const order = orderClause(filter.orderBy?.length ? filter.orderBy : DEFAULT_ORDER, ORDER_COLUMNS, sql.raw("m.id"));
  const { limit, offset } = pageWindow(page);
  const [rows, counted] = await batchRows<[MaterialRow, { total: number }]>(db, [
    sql`SELECT ${COLUMNS} FROM materials m WHERE ${where} ${order} LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT count(*) AS total FROM materials m WHERE ${where}`,
  ]);
  return { rows, total: counted[0]?.total ?? 0 };
}

/** A material with its categories, in one round trip; 404 `MATERIAL_NOT_FOUND`. */
export function readMaterial(db: Db, id: number): Promise<MaterialDetail> {
  return readLinkedRecord<MaterialRow>(db, MATERIAL, id);
}

export interface MaterialValues {
  name: string;
  description?: string | null | undefined;
  density_kg_m3?: number | null | undefined;
  is_crm?: boolean | undefined;
}

export type MaterialChanges = Partial<MaterialValues>;

const taken = (error: unknown) => nameTaken(error, "materials", "MATERIAL_NAME_TAKEN", "material");

/** Creates a material (no categories yet); 409 `MATERIAL_NAME_TAKEN` for a name in use. */
export async function createMaterial(deps: ReferenceDeps, actor: SessionUser, values: MaterialValues): Promise<MaterialDetail> {
  let rows: MaterialRow[];
  try {
    [rows] = await batchRows<[MaterialRow]>(deps.db, [
      sql`INSERT INTO materials (name, description, density_kg_m3, is_crm)
        VALUES (${values.name}, ${values.description ?? null}, ${values.density_kg_m3 ?? null}, ${values.is_crm ? 1 : 0})
        RETURNING ${RETURNED}`,
    ]);
  } catch (error) {
    throw taken(error) ?? error;
  }
  const row = rows[0]!;
  await referenceWritten(deps, actor, "admin.reference.created", MATERIAL, row.id);
  return { row, categories: [] };
}

const CHANGE_COLUMNS = ["name", "description", "density_kg_m3", "is_crm"] as const;

/**
 * Applies the given members in one round trip with the material's categories; `updated_at`
 * moves only when a value really changes. 404 for an unknown id, 409 for a name in use.
 */
export async function updateMaterial(deps: ReferenceDeps, actor: SessionUser, id: number, changes: MaterialChanges): Promise<MaterialDetail> {
  const values = CHANGE_COLUMNS.flatMap((column) => {
    const value = changes[column];
    if (value === undefined) return [];
    return [{ column: sql.raw(column), value: typeof value === "boolean" ? (value ? 1 : 0) : value }];
  });
  if (values.length === 0) {
    const detail = await readMaterial(deps.db, id);
    await referenceWritten(deps, actor, "admin.reference.updated", MATERIAL, id, { fields: [] });
    return detail;
  }
  const sets = sql.join(values.map(({ column, value }) => sql`${column} = ${value}`), sql`, `);
  const differs = sql.join(values.map(({ column, value }) => sql`${column} IS NOT ${value}`), sql` OR `);
  let before: MaterialRow[];
  let rows: MaterialRow[];
  let categories: LinkedCategoryRow[];
  // The row before the change comes in the same batch, so the audit names what really changed.
  try {
    [before, rows, categories] = await batchRows<[MaterialRow, MaterialRow, LinkedCategoryRow]>(deps.db, [
      MATERIAL.recordStatement(id),
      sql`UPDATE materials SET ${sets}, updated_at = CASE WHEN ${differs} THEN unixepoch() ELSE updated_at END
        WHERE id = ${id} RETURNING ${RETURNED}`,
      linkedCategoriesStatement(MATERIAL, id),
    ]);
  } catch (error) {
    throw taken(error) ?? error;
  }
  if (!rows[0] || !before[0]) throw MATERIAL.missing();
  const [old, now] = [before[0], rows[0]];
  await referenceWritten(deps, actor, "admin.reference.updated", MATERIAL, id, { fields: CHANGE_COLUMNS.filter((c) => old[c] !== now[c]) });
  return { row: rows[0], categories };
}

function inUse(uses?: number): ApiError {
  const by = uses === undefined ? "a bill of materials" : `${uses} bill-of-materials ${uses === 1 ? "entry" : "entries"}`;
  return new ApiError(409, { code: "MATERIAL_IN_USE", detail: `The material is named by ${by}; remove it from them first.` });
}

/**
 * Deletes a material with its category links. One still named by a bill of materials stays
 * (409 `MATERIAL_IN_USE`): the DELETE itself checks, so an entry added meanwhile cannot slip
 * through, and the foreign key would refuse it anyway.
 */
export async function deleteMaterial(deps: ReferenceDeps, actor: SessionUser, id: number): Promise<void> {
  const uses = sql`SELECT count(*) FROM bill_of_materials b WHERE b.material_id = ${id}`;
  let found: { uses: number }[];
  let deleted: { id: number }[];
  try {
    [found, deleted] = await batchRows<[{ uses: number }, { id: number }]>(deps.db, [
      sql`SELECT (${uses}) AS uses FROM materials WHERE id = ${id}`,
      sql`DELETE FROM materials WHERE id = ${id} AND NOT EXISTS (SELECT 1 FROM bill_of_materials b WHERE b.material_id = ${id}) RETURNING id`,
    ]);
  } catch (error) {
    if (/FOREIGN KEY constraint failed/i.test(String((error as Error)?.message) + String((error as Error)?.cause ?? ""))) throw inUse();
    throw error;
  }
  if (!found[0]) throw MATERIAL.missing();
  if (!deleted[0]) throw inUse(found[0].uses);
  await referenceWritten(deps, actor, "admin.reference.deleted", MATERIAL, id);
}

export function linkMaterialCategories(deps: ReferenceDeps, actor: SessionUser, id: number, categoryIds: readonly number[]): Promise<MaterialDetail> {
  return addCategoryLinks<MaterialRow>(deps, actor, MATERIAL, id, categoryIds);
}

export function unlinkMaterialCategory(deps: ReferenceDeps, actor: SessionUser, id: number, categoryId: number): Promise<void> {
  return removeCategoryLink(deps, actor, MATERIAL, id, categoryId);
}
