import { count, eq, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import type { Row } from "../../db/rows";
import { categories, TAXONOMY_DOMAINS, taxonomies } from "../../db/schema";
import type { PageQuery } from "../../lib/pagination";
import { ApiError, notFound } from "../../lib/problem";
import { type ListOrder, type OrderTerm, orderClause, type ReferenceOrderField, referenceOrderColumns } from "./order";
import {
  assignments,
  auditReferenceWrite,
  changedFields,
  deleteRow,
  insertStatement,
  listPage,
  nameContains,
  type ReferenceServices,
  recordTable,
  refusingDuplicates,
  rowStatement,
  updateStatement,
} from "./records";

/**
 * Taxonomies: the paged list, the detail with its category count, and the administrator's
 * writes, one round trip each. The handlers clear the `reference-data` cache after a write.
 */

export const taxonomyNotFound = () => notFound("No taxonomy has this id.", "TAXONOMY_NOT_FOUND");

export type TaxonomyDomain = (typeof TAXONOMY_DOMAINS)[number];

const ORDER: ListOrder<ReferenceOrderField> = { columns: referenceOrderColumns("t"), ties: "as-last-term" };

/** A taxonomy as stored; `domains` is JSON text. */
export type TaxonomyRow = Row<typeof taxonomies>;

const TAXONOMIES = recordTable(taxonomies, "t", ["id", "name", "version", "description", "domains", "source", "created_at", "updated_at"]);

export interface TaxonomyFilter {
  /** Only taxonomies that cover this domain. */
  domain?: TaxonomyDomain;
  nameIlike?: string;
  orderBy?: readonly OrderTerm<ReferenceOrderField>[];
}

/** One page of taxonomies and how many match, in one round trip. */
export function listTaxonomies(
  svc: Pick<Services, "db">,
  filter: TaxonomyFilter,
  page: PageQuery,
): Promise<{ rows: TaxonomyRow[]; total: number }> {
  // Raw: the list's filters are SQL over the alias `listPage` reads under (records.ts), the domain one over JSON (json_each).
  const where: SQL[] = [];
  if (filter.domain !== undefined) where.push(sql`EXISTS (SELECT 1 FROM json_each(t.domains) WHERE value = ${filter.domain})`);
  if (filter.nameIlike !== undefined) where.push(nameContains(TAXONOMIES, filter.nameIlike));
  const condition = where.length === 0 ? sql`1` : sql.join(where, sql` AND `);
  return listPage<TaxonomyRow>(svc, TAXONOMIES, condition, orderClause(filter.orderBy, ORDER), page);
}

/** One taxonomy with the number of its categories (every level); null when there is none. */
export async function readTaxonomy(svc: Pick<Services, "db">, id: number): Promise<(TaxonomyRow & { category_count: number }) | null> {
  // Its categories at every level: each names its taxonomy.
  const categoryCount = svc.db.select({ total: count() }).from(categories).where(eq(categories.taxonomy_id, taxonomies.id));
  const [rows] = await batchRows<[TaxonomyRow & { category_count: number }]>(svc.db, [
    svc.db
      .select({ ...TAXONOMIES.fields, category_count: sql<number>`${categoryCount}`.as("category_count") })
      .from(taxonomies)
      .where(eq(taxonomies.id, id)),
  ]);
  return rows[0] ?? null;
}

export interface TaxonomyCreate {
  name: string;
  version: string;
  domains: TaxonomyDomain[];
  description?: string | null | undefined;
  source?: string | null | undefined;
}

export type TaxonomyChanges = Partial<TaxonomyCreate>;

const CHANGE_COLUMNS = ["name", "version", "domains", "description", "source"] as const;

/** Domains as stored: JSON in the order of `TAXONOMY_DOMAINS`, so equal sets are equal texts. */
function domainsText(domains: readonly TaxonomyDomain[]): string {
  return JSON.stringify(TAXONOMY_DOMAINS.filter((domain) => domains.includes(domain)));
}

const nameTaken = () => new ApiError(409, { code: "TAXONOMY_NAME_TAKEN", detail: "A taxonomy with this name and version already exists." });

const writing = <T>(write: () => Promise<T>) => refusingDuplicates("taxonomies.name, taxonomies.version", nameTaken, write);

export async function createTaxonomy(svc: ReferenceServices, actor: SessionUser, input: TaxonomyCreate): Promise<TaxonomyRow> {
  const values = {
    name: input.name,
    version: input.version,
    domains: domainsText(input.domains),
    description: input.description ?? null,
    source: input.source ?? null,
  };
  const [rows] = await writing(() => batchRows<[TaxonomyRow]>(svc.db, [insertStatement(svc.db, TAXONOMIES, values)]));
  const row = rows[0]!;
  auditReferenceWrite(svc, actor, "admin.reference.created", "taxonomy", row.id);
  return row;
}

/** Applies an administrator's changes in one batch; `updated_at` moves only when a value does. */
export async function updateTaxonomy(
  svc: ReferenceServices,
  actor: SessionUser,
  id: number,
  changes: TaxonomyChanges,
): Promise<TaxonomyRow> {
  const set = assignments(CHANGE_COLUMNS, changes, (column, value) =>
    column === "domains" ? domainsText(value as TaxonomyDomain[]) : value,
  );
  const statements: SQLWrapper[] = [rowStatement(svc.db, TAXONOMIES, id)];
  if (set.length > 0) statements.push(updateStatement(TAXONOMIES, id, set));
  const [before = [], updated = []] = await writing(() => batchRows<TaxonomyRow[]>(svc.db, statements));
  const old = before[0];
  if (!old) throw taxonomyNotFound();
  const now = updated[0] ?? old;
  auditReferenceWrite(svc, actor, "admin.reference.updated", "taxonomy", id, { fields: changedFields(CHANGE_COLUMNS, old, now) });
  return now;
}

/** Deletes a taxonomy; its categories, their subtrees and links go with it (ON DELETE CASCADE). */
export async function deleteTaxonomy(svc: ReferenceServices, actor: SessionUser, id: number): Promise<void> {
  if (!(await deleteRow(svc, TAXONOMIES, id))) throw taxonomyNotFound();
  auditReferenceWrite(svc, actor, "admin.reference.deleted", "taxonomy", id);
}
