import { type SQL, sql } from "drizzle-orm";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { isConstraintFailure } from "../../db/constraint-errors";
import type { Row } from "../../db/rows";
import { materialCategories, materials } from "../../db/schema";
import type { PageQuery } from "../../lib/pagination";
import { ApiError, notFound } from "../../lib/problem";
import {
  addCategoryLinks,
  createLinkedRecord,
  type LinkedKind,
  type LinkedRecord,
  linkedToCategory,
  readLinkedRecord,
  removeCategoryLink,
  updateLinkedRecord,
} from "./category-links";
import { type ListOrder, type OrderTerm, orderClause, referenceOrderColumns } from "./order";
import { assignments, listPage, nameContains, type ReferenceServices, recordTable, referenceWritten } from "./records";

export type MaterialRow = Row<typeof materials>;

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

const ORDER: ListOrder<MaterialOrderField> = {
  columns: { ...referenceOrderColumns("m"), density_kg_m3: "m.density_kg_m3" },
  nullsLast: ["density_kg_m3"],
  ties: "ascending",
};

export const MATERIAL: LinkedKind<MaterialRow> = {
  ...recordTable(materials, "m", ["id", "name", "description", "density_kg_m3", "is_crm", "created_at", "updated_at"]),
  kind: "material",
  links: { table: materialCategories, owner: materialCategories.material_id, category: materialCategories.category_id },
  changeColumns: ["name", "description", "density_kg_m3", "is_crm"],
  missing: () => notFound("No material has this id.", "MATERIAL_NOT_FOUND"),
  nameTaken: () => new ApiError(409, { code: "MATERIAL_NAME_TAKEN", detail: "Another material already has this name." }),
};

// Raw: the list's filters are SQL over the alias `listPage` reads under (records.ts).
function conditions(filter: MaterialFilter): SQL {
  const where: SQL[] = [sql`1`];
  if (filter.nameIlike !== undefined) where.push(nameContains(MATERIAL, filter.nameIlike));
  if (filter.isCrm !== undefined) where.push(sql`m.is_crm = ${filter.isCrm ? 1 : 0}`);
  if (filter.density?.ge !== undefined) where.push(sql`m.density_kg_m3 >= ${filter.density.ge}`);
  if (filter.density?.le !== undefined) where.push(sql`m.density_kg_m3 <= ${filter.density.le}`);
  if (filter.categoryId !== undefined) where.push(linkedToCategory(MATERIAL, filter.categoryId));
  return sql.join(where, sql` AND `);
}

/** One page of materials and how many match, in one round trip. */
export function listMaterials(
  svc: Pick<Services, "db">,
  filter: MaterialFilter,
  page: PageQuery,
): Promise<{ rows: MaterialRow[]; total: number }> {
  return listPage<MaterialRow>(svc, MATERIAL, conditions(filter), orderClause(filter.orderBy, ORDER), page);
}

/** A material with its categories, in one round trip; 404 `MATERIAL_NOT_FOUND`. */
export function readMaterial(svc: Pick<Services, "db">, id: number): Promise<MaterialDetail> {
  return readLinkedRecord(svc, MATERIAL, id);
}

export interface MaterialValues {
  name: string;
  description?: string | null | undefined;
  density_kg_m3?: number | null | undefined;
  is_crm?: boolean | undefined;
}

export type MaterialChanges = Partial<MaterialValues>;

/** Creates a material (no categories yet); 409 `MATERIAL_NAME_TAKEN` for a name in use. */
export function createMaterial(svc: ReferenceServices, actor: SessionUser, values: MaterialValues): Promise<MaterialDetail> {
  return createLinkedRecord(svc, actor, MATERIAL, {
    name: values.name,
    description: values.description ?? null,
    density_kg_m3: values.density_kg_m3 ?? null,
    is_crm: values.is_crm ? 1 : 0,
  });
}

/**
 * Applies the given members in one round trip with the material's categories; `updated_at`
 * moves only when a value really changes. 404 for an unknown id, 409 for a name in use.
 */
export function updateMaterial(svc: ReferenceServices, actor: SessionUser, id: number, changes: MaterialChanges): Promise<MaterialDetail> {
  // SQLite has no booleans: `is_crm` is stored as 0 or 1.
  const set = assignments(MATERIAL.changeColumns, changes, (_, value) => (typeof value === "boolean" ? (value ? 1 : 0) : value));
  return updateLinkedRecord(svc, actor, MATERIAL, id, set);
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
export async function deleteMaterial(svc: ReferenceServices, actor: SessionUser, id: number): Promise<void> {
  const uses = sql`SELECT count(*) FROM bill_of_materials b WHERE b.material_id = ${id}`;
  let found: { uses: number }[];
  let deleted: { id: number }[];
  try {
    // Raw: the DELETE's NOT EXISTS is its own condition, and the count beside it says why it refused.
    [found, deleted] = await batchRows<[{ uses: number }, { id: number }]>(svc.db, [
      sql`SELECT (${uses}) AS uses FROM materials WHERE id = ${id}`,
      sql`DELETE FROM materials WHERE id = ${id} AND NOT EXISTS (SELECT 1 FROM bill_of_materials b WHERE b.material_id = ${id}) RETURNING id`,
    ]);
  } catch (error) {
    if (isConstraintFailure(error, "FOREIGN KEY")) throw inUse();
    throw error;
  }
  if (!found[0]) throw MATERIAL.missing();
  if (!deleted[0]) throw inUse(found[0].uses);
  await referenceWritten(svc, actor, "admin.reference.deleted", MATERIAL.kind, id);
}

export function linkMaterialCategories(
  svc: ReferenceServices,
  actor: SessionUser,
  id: number,
  categoryIds: readonly number[],
): Promise<MaterialDetail> {
  return addCategoryLinks(svc, actor, MATERIAL, id, categoryIds);
}

export function unlinkMaterialCategory(svc: ReferenceServices, actor: SessionUser, id: number, categoryId: number): Promise<void> {
  return removeCategoryLink(svc, actor, MATERIAL, id, categoryId);
}
