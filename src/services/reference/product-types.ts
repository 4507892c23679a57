import { type SQL, sql } from "drizzle-orm";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import type { Row } from "../../db/rows";
import { productTypeCategories, productTypes } from "../../db/schema";
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
import { type ListOrder, type OrderTerm, orderClause, type ReferenceOrderField, referenceOrderColumns } from "./order";
import { assignments, deleteRow, listPage, nameContains, type ReferenceServices, recordTable, referenceWritten } from "./records";

export type ProductTypeRow = Row<typeof productTypes>;

export type ProductTypeDetail = LinkedRecord<ProductTypeRow>;

/** The list's filters in plain values; absent members do not filter. */
export interface ProductTypeFilter {
  nameIlike?: string;
  /** Only product types linked to this category itself. */
  categoryId?: number;
  /** `+name` when absent or empty. */
  orderBy?: readonly OrderTerm<ReferenceOrderField>[];
}

const ORDER: ListOrder<ReferenceOrderField> = { columns: referenceOrderColumns("t"), ties: "ascending" };

export const PRODUCT_TYPE: LinkedKind<ProductTypeRow> = {
  ...recordTable(productTypes, "t", ["id", "name", "description", "created_at", "updated_at"]),
  kind: "product_type",
  links: { table: productTypeCategories, owner: productTypeCategories.product_type_id, category: productTypeCategories.category_id },
  changeColumns: ["name", "description"],
  missing: () => notFound("No product type has this id.", "PRODUCT_TYPE_NOT_FOUND"),
  nameTaken: () => new ApiError(409, { code: "PRODUCT_TYPE_NAME_TAKEN", detail: "Another product type already has this name." }),
};

function conditions(filter: ProductTypeFilter): SQL {
  const where: SQL[] = [sql`1`];
  if (filter.nameIlike !== undefined) where.push(nameContains(PRODUCT_TYPE, filter.nameIlike));
  if (filter.categoryId !== undefined) where.push(linkedToCategory(PRODUCT_TYPE, filter.categoryId));
  return sql.join(where, sql` AND `);
}

/** One page of product types and how many match, in one round trip. */
export function listProductTypes(
  svc: Pick<Services, "db">,
  filter: ProductTypeFilter,
  page: PageQuery,
): Promise<{ rows: ProductTypeRow[]; total: number }> {
  return listPage<ProductTypeRow>(svc, PRODUCT_TYPE, conditions(filter), orderClause(filter.orderBy, ORDER), page);
}

/** A product type with its categories, in one round trip; 404 `PRODUCT_TYPE_NOT_FOUND`. */
export function readProductType(svc: Pick<Services, "db">, id: number): Promise<ProductTypeDetail> {
  return readLinkedRecord(svc, PRODUCT_TYPE, id);
}

export interface ProductTypeValues {
  name: string;
  description?: string | null | undefined;
}

export type ProductTypeChanges = Partial<ProductTypeValues>;

/** Creates a product type (no categories yet); 409 `PRODUCT_TYPE_NAME_TAKEN` for a name in use. */
export function createProductType(svc: ReferenceServices, actor: SessionUser, values: ProductTypeValues): Promise<ProductTypeDetail> {
  return createLinkedRecord(svc, actor, PRODUCT_TYPE, { name: values.name, description: values.description ?? null });
}

/**
 * Applies the given members in one round trip with the type's categories; `updated_at` moves
 * only when a value really changes. 404 for an unknown id, 409 for a name in use.
 */
export function updateProductType(
  svc: ReferenceServices,
  actor: SessionUser,
  id: number,
  changes: ProductTypeChanges,
): Promise<ProductTypeDetail> {
  return updateLinkedRecord(svc, actor, PRODUCT_TYPE, id, assignments(PRODUCT_TYPE.changeColumns, changes));
}

/** Deletes a product type with its category links; its products keep existing without a type (the foreign key sets it to null). */
export async function deleteProductType(svc: ReferenceServices, actor: SessionUser, id: number): Promise<void> {
  if (!(await deleteRow(svc, PRODUCT_TYPE, id))) throw PRODUCT_TYPE.missing();
  await referenceWritten(svc, actor, "admin.reference.deleted", PRODUCT_TYPE.kind, id);
}

export function linkProductTypeCategories(
  svc: ReferenceServices,
  actor: SessionUser,
  id: number,
  categoryIds: readonly number[],
): Promise<ProductTypeDetail> {
  return addCategoryLinks(svc, actor, PRODUCT_TYPE, id, categoryIds);
}

export function unlinkProductTypeCategory(svc: ReferenceServices, actor: SessionUser, id: number, categoryId: number): Promise<void> {
  return removeCategoryLink(svc, actor, PRODUCT_TYPE, id, categoryId);
}
