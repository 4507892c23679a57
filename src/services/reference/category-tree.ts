import { type SQL, sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import type { RowOf } from "../../db/rows";
import type { categories } from "../../db/schema";
import { type PageQuery, pageWindow } from "../../lib/pagination";
import { type CategoryParent, parentExists } from "./categories";

/**
 * Category trees (docs/reference-data.md, Trees): a page of top-level nodes, each with its
 * subcategories down to a depth. The page and its count are two statements of ONE batch, and
 * the page is ONE recursive CTE, so a tree costs one D1 round trip whatever its size.
 */

/** Deepest `recursion_depth` a tree may ask for, and the default (the top level and its direct subcategories). */
export const MAX_CATEGORY_DEPTH = 5;
export const DEFAULT_CATEGORY_DEPTH = 1;

/**
 * Which nodes make the top level: the top-level categories of every taxonomy (or of the one
 * `taxonomyId` names, which only filters: an unknown one is an empty page), of one taxonomy, or
 * the direct subcategories of one category (those two 404 when their parent does not exist).
 */
export type TreeScope = { kind: "all"; taxonomyId?: number } | CategoryParent;

/** A node of the tree as read: its own fields, its parent, and how far below the top level it sits (0: top). */
export type CategoryTreeRow = RowOf<
  typeof categories,
  "id" | "name" | "description" | "external_id" | "taxonomy_id" | "supercategory_id"
> & {
  level: number;
};

function topCondition(scope: TreeScope): SQL {
  switch (scope.kind) {
    case "all":
      return scope.taxonomyId === undefined
        ? sql`c.supercategory_id IS NULL`
        : sql`c.supercategory_id IS NULL AND c.taxonomy_id = ${scope.taxonomyId}`;
    case "taxonomy":
      return sql`c.supercategory_id IS NULL AND c.taxonomy_id = ${scope.id}`;
    case "category":
      return sql`c.supercategory_id = ${scope.id}`;
  }
}

/**
 * `[rows, summary]` for one batch. `rows`: the page of top-level nodes (by name, then id) walked
 * down `categories_supercategory_idx` to `depth` levels below them; a level-0 node is a top one.
 * The `level` bound also ends the walk on a tree that is already broken by a cycle. `summary`:
 * the count of top-level nodes and whether the scope's parent exists. Siblings come out ordered
 * by name, then id, since all rows are.
 */
export function categoryTreeStatements(scope: TreeScope, depth: number, page: PageQuery): [rows: SQL, summary: SQL] {
  const { limit, offset } = pageWindow(page);
  const where = topCondition(scope);
  const found = scope.kind === "all" ? sql`1` : parentExists(scope);
  return [
    // Raw: a recursive CTE walks the subcategories.
    sql`WITH RECURSIVE top(id) AS (
          SELECT c.id FROM categories c WHERE ${where} ORDER BY c.name COLLATE NOCASE, c.id LIMIT ${limit} OFFSET ${offset}
        ),
        tree(id, level) AS (
          SELECT id, 0 FROM top
          UNION ALL
          SELECT c.id, tree.level + 1 FROM tree JOIN categories c ON c.supercategory_id = tree.id
          WHERE tree.level < ${depth}
        )
        SELECT c.id, c.name, c.description, c.external_id, c.taxonomy_id, c.supercategory_id, tree.level
        FROM tree CROSS JOIN categories c ON c.id = tree.id
        ORDER BY c.name COLLATE NOCASE, c.id`,
    // Raw: the count beside whether the parent exists, one row of sub-selects (as the categories list's), under the CTE's condition.
    sql`SELECT (SELECT count(*) FROM categories c WHERE ${where}) AS total, ${found} AS found`,
  ];
}

export interface CategoryTreePage {
  rows: CategoryTreeRow[];
  total: number;
}

/** A page of the tree as rows, and the number of top-level nodes; null when the scope's parent does not exist. */
export async function readCategoryTree(
  svc: Pick<Services, "db">,
  scope: { kind: "all"; taxonomyId?: number },
  depth: number,
  page: PageQuery,
): Promise<CategoryTreePage>;
export async function readCategoryTree(
  svc: Pick<Services, "db">,
  scope: CategoryParent,
  depth: number,
  page: PageQuery,
): Promise<CategoryTreePage | null>;
export async function readCategoryTree(
  svc: Pick<Services, "db">,
  scope: TreeScope,
  depth: number,
  page: PageQuery,
): Promise<CategoryTreePage | null> {
  const [rows, summary] = await batchRows<[CategoryTreeRow, { total: number; found: number }]>(
    svc.db,
    categoryTreeStatements(scope, depth, page),
  );
  if (!summary[0]?.found) return null;
  return { rows, total: summary[0].total };
}

/** A node of a nested answer: the category as `N` and its subcategories. */
export type CategoryTreeNode<N> = N & { subcategories: CategoryTreeNode<N>[] };

/**
 * Nests tree rows: level-0 rows are the top level, every other row goes under its
 * supercategory, in the order of `rows`. Linear in the number of rows.
 */
export function nestCategories<N extends object>(
  rows: readonly CategoryTreeRow[],
  toNode: (row: CategoryTreeRow) => N,
): CategoryTreeNode<N>[] {
  const children = new Map<number, CategoryTreeNode<N>[]>();
  const nodes = rows.map((row) => {
    const node: CategoryTreeNode<N> = { ...toNode(row), subcategories: [] };
    children.set(row.id, node.subcategories);
    return { row, node };
  });
  const top: CategoryTreeNode<N>[] = [];
  for (const { row, node } of nodes) {
    if (row.level === 0) top.push(node);
    else if (row.supercategory_id !== null) children.get(row.supercategory_id)?.push(node);
  }
  return top;
}
