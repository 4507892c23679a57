import { type SQL, sql } from "drizzle-orm";
import { batchRows, type Db } from "../db/client";
import { TAXONOMY_DOMAINS } from "../db/schema";
import { audit } from "../lib/audit";
import type { Logger } from "../lib/logger";
import { ApiError, notFound } from "../lib/problem";
import { type PageQuery, pageWindow } from "../lib/pagination";
import { likeContains } from "./product-query";
import type { SessionUser } from "./sessions";

/**
 * Taxonomies: the paged list, the detail with its category count, and the administrator's
 * writes, one round trip each. Also the pieces the category service shares with it (sorting,
 * unique-violation checks), kept here so that categories depend on taxonomies and not both ways.
 */

export type ReferenceDeps = { db: Db; log: Logger };

/** One sort term of a reference-data list: `+field` or `-field`. */
export interface OrderTerm<F extends string> {
  field: F;
  descending: boolean;
}

/**
 * `ORDER BY` over `terms` (columns from a fixed map, never from the request), then the id in the
 * last term's direction, so pages never overlap. Names sort case-insensitively, as products do.
 */
export function orderBySql<F extends string>(terms: readonly OrderTerm<F>[], columns: Record<F, string>, id: string): SQL {
  const parts = terms.map(({ field, descending }) => sql.raw(`${columns[field]} ${descending ? "DESC" : "ASC"}`));
  if (!terms.some((term) => columns[term.field] === id)) {
    parts.push(sql.raw(`${id} ${terms[terms.length - 1]?.descending ? "DESC" : "ASC"}`));
  }
  return sql.join(parts, sql`, `);
}

/** True when `error` (or one of its causes) is a UNIQUE violation over `columns` as SQLite names them (`table.a, table.b`). */
export function isUniqueViolation(error: unknown, columns: string): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e.message.includes(`UNIQUE constraint failed: ${columns}`)) return true;
  }
  return false;
}

export const taxonomyNotFound = () => notFound("No taxonomy has this id.", "TAXONOMY_NOT_FOUND");

export type TaxonomyDomain = (typeof TAXONOMY_DOMAINS)[number];

export const TAXONOMY_ORDER_FIELDS = ["name", "id", "created_at"] as const;
export type TaxonomyOrderField = (typeof TAXONOMY_ORDER_FIELDS)[number];

const ORDER_COLUMNS: Record<TaxonomyOrderField, string> = { name: "t.name COLLATE NOCASE", id: "t.id", created_at: "t.created_at" };
const DEFAULT_ORDER: readonly OrderTerm<TaxonomyOrderField>[] = [{ field: "name", descending: false }];

/** A taxonomy as stored; `domains` is JSON text. */
export interface TaxonomyRow {
  id: number;
  name: string;
  version: string;
  description: string | null;
  domains: string;
  source: string | null;
  created_at: number;
  updated_at: number;
}

const COLUMNS = sql.raw("t.id, t.name, t.version, t.description, t.domains, t.source, t.created_at, t.updated_at");
const RETURNED = sql.raw("id, name, version, description, domains, source, created_at, updated_at");

export interface TaxonomyFilter {
  /** Only taxonomies that cover this domain. */
  domain?: TaxonomyDomain;
  nameIlike?: string;
  orderBy?: readonly OrderTerm<TaxonomyOrderField>[];
}

/** One page of taxonomies and how many match, in one round trip. */
export async function listTaxonomies(db: Db, filter: TaxonomyFilter, page: PageQuery): Promise<{ rows: TaxonomyRow[]; total: number }> {
  const where: SQL[] = [];
  if (filter.domain !== undefined) where.push(sql`EXISTS (SELECT 1 FROM json_each(t.domains) WHERE value = ${filter.domain})`);
  if (filter.nameIlike !== undefined) where.push(sql`t.name LIKE ${likeContains(filter.nameIlike)} ESCAPE '\\'`);
  const condition = where.length === 0 ? sql`1` : sql.join(where, sql` AND `);
  const order = filter.orderBy && filter.orderBy.length > 0 ? filter.orderBy : DEFAULT_ORDER;
  const { limit, offset } = pageWindow(page);
  const [rows, counted] = await batchRows<[TaxonomyRow, { total: number }]>(db, [
    sql`SELECT ${COLUMNS} FROM taxonomies t WHERE ${condition} ORDER BY ${orderBySql(order, ORDER_COLUMNS, "t.id")} LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT count(*) AS total FROM taxonomies t WHERE ${condition}`,
  ]);
  return { rows, total: counted[0]?.total ?? 0 };
}

/** One taxonomy with the number of its categories (every level); null when there is none. */
export async function readTaxonomy(db: Db, id: number): Promise<(TaxonomyRow & { category_count: number }) | null> {
  const [rows] = await batchRows<[TaxonomyRow & { category_count: number }]>(db, [
    sql`SELECT ${COLUMNS}, (SELECT count(*) FROM categories c WHERE c.taxonomy_id = t.id) AS category_count
      FROM taxonomies t WHERE t.id = ${id}`,
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

const nameTaken = () =>
  new ApiError(409, { code: "TAXONOMY_NAME_TAKEN", detail: "A taxonomy with this name and version already exists." });

async function writing<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, "taxonomies.name, taxonomies.version")) throw nameTaken();
    throw error;
  }
}

export async function createTaxonomy(deps: ReferenceDeps, actor: SessionUser, input: TaxonomyCreate): Promise<TaxonomyRow> {
  const [rows] = await writing(() =>
    batchRows<[TaxonomyRow]>(deps.db, [
      sql`INSERT INTO taxonomies (name, version, domains, description, source)
        VALUES (${input.name}, ${input.version}, ${domainsText(input.domains)}, ${input.description ?? null}, ${input.source ?? null})
        RETURNING ${RETURNED}`,
    ]),
  );
  const row = rows[0]!;
  audit(deps.log, "admin.reference.created", { actor_id: actor.id, kind: "taxonomy", id: row.id });
  return row;
}

/** Applies an administrator's changes in one batch; `updated_at` moves only when a value does. */
export async function updateTaxonomy(deps: ReferenceDeps, actor: SessionUser, id: number, changes: TaxonomyChanges): Promise<TaxonomyRow> {
  const set = CHANGE_COLUMNS.filter((column) => changes[column] !== undefined).map((column) => ({
    column,
    value: column === "domains" ? domainsText(changes.domains!) : (changes[column] as string | null),
  }));
  const current = sql`SELECT ${RETURNED} FROM taxonomies WHERE id = ${id}`;
  const statements: SQL[] = [current];
  if (set.length > 0) {
    const assignments = sql.join(set.map(({ column, value }) => sql`${sql.raw(column)} = ${value}`), sql`, `);
    const differs = sql.join(set.map(({ column, value }) => sql`${sql.raw(column)} IS NOT ${value}`), sql` OR `);
    statements.push(sql`UPDATE taxonomies SET ${assignments}, updated_at = CASE WHEN ${differs} THEN unixepoch() ELSE updated_at END
      WHERE id = ${id} RETURNING ${RETURNED}`);
  }
  const [before = [], updated = []] = await writing(() => batchRows<TaxonomyRow[]>(deps.db, statements));
  const old = before[0];
  if (!old) throw taxonomyNotFound();
  const now = updated[0] ?? old;
  const fields = CHANGE_COLUMNS.filter((column) => old[column] !== now[column]);
  audit(deps.log, "admin.reference.updated", { actor_id: actor.id, kind: "taxonomy", id, fields });
  return now;
}

/** Deletes a taxonomy; its categories, their subtrees and links go with it (ON DELETE CASCADE). */
export async function deleteTaxonomy(deps: ReferenceDeps, actor: SessionUser, id: number): Promise<void> {
  const [rows] = await batchRows<[{ id: number }]>(deps.db, [sql`DELETE FROM taxonomies WHERE id = ${id} RETURNING id`]);
  if (!rows[0]) throw taxonomyNotFound();
  audit(deps.log, "admin.reference.deleted", { actor_id: actor.id, kind: "taxonomy", id });
}
