import { type SQL, sql } from "drizzle-orm";

/**
 * Sorting of the reference-data lists (taxonomies, categories, materials, product types): one
 * term type and one `ORDER BY` builder, each list naming its own columns.
 */

/** One sort term of a reference list: `+field` or `-field`. */
export interface OrderTerm<F extends string> {
  field: F;
  descending: boolean;
}

/** How one kind's list sorts. Every kind sorts by `name` (its default) and `id`. */
export interface ListOrder<F extends string> {
  /** The SQL expression of each field: fixed text, never taken from the request. */
  columns: Record<F | "name" | "id", string>;
  /** Fields whose nulls sort last in both directions. */
  nullsLast?: readonly F[];
  /**
   * Which way `id` breaks ties. Taxonomies and categories follow the last term, materials and
   * product types always ascend: the two were built apart, and unifying them would reorder ties
   * in answers clients already get.
   */
  ties: "as-last-term" | "ascending";
}

/** What every reference list sorts by; materials add their density. */
export const REFERENCE_ORDER_FIELDS = ["name", "id", "created_at"] as const;
export type ReferenceOrderField = (typeof REFERENCE_ORDER_FIELDS)[number];

/** The columns of `REFERENCE_ORDER_FIELDS` in a list read under `alias`. Names sort case-insensitively, as products do. */
export function referenceOrderColumns(alias: string): Record<ReferenceOrderField, string> {
  return { name: `${alias}.name COLLATE NOCASE`, id: `${alias}.id`, created_at: `${alias}.created_at` };
}

const BY_NAME: readonly OrderTerm<"name">[] = [{ field: "name", descending: false }];

/** `ORDER BY` of a list: the terms (`+name` when none), then `id` to break ties unless a term already orders by it. */
export function orderClause<F extends string>(terms: readonly OrderTerm<F>[] | undefined, order: ListOrder<F>): SQL {
  const effective: readonly OrderTerm<F | "name">[] = terms?.length ? terms : BY_NAME;
  const parts = effective.flatMap(({ field, descending }) => {
    const expr = sql.raw(order.columns[field]);
    const direction = sql.raw(descending ? "DESC" : "ASC");
    const nullable = (order.nullsLast as readonly string[] | undefined)?.includes(field);
    return nullable ? [sql`(${expr} IS NULL)`, sql`${expr} ${direction}`] : [sql`${expr} ${direction}`];
  });
  if (!effective.some((term) => term.field === "id")) {
    const descending = order.ties === "as-last-term" && effective[effective.length - 1]!.descending;
    parts.push(sql`${sql.raw(order.columns.id)} ${sql.raw(descending ? "DESC" : "ASC")}`);
  }
  return sql`ORDER BY ${sql.join(parts, sql`, `)}`;
}
