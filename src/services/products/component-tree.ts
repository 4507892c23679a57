import { type SQL, sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { type PageQuery, pageWindow } from "../../lib/pagination";
import { ApiError } from "../../lib/problem";
import { kindCondition, RECORD_COLUMNS, RECORD_JOINS, type RecordKind, type RecordRow } from "./records";

/**
 * Reads of the components below a base product or a component: one page of the direct ones, and
 * the nested tree down to a depth. Each costs ONE D1 round trip whatever the size: the existence
 * check of the addressed record and the rows travel in one batch, and the whole tree is one
 * recursive CTE.
 */

/** Most components a tree answer may hold (api-spec, Limits: "component tree"). */
export const MAX_TREE_COMPONENTS = 1000;

/** Deepest `recursion_depth` a tree may ask for, and the default (direct components only). */
export const MAX_RECURSION_DEPTH = 10;
export const DEFAULT_RECURSION_DEPTH = 1;

interface CountRow {
  total: number;
}

interface IdRow {
  id: number;
}

/** A `RecordRow` with how far below the addressed record it sits (1: a direct component). */
export interface TreeRow extends RecordRow {
  level: number;
}

/** The addressed record, when a record of `kind` has `id` (the kinds do not mix: a 404 otherwise). */
function rootStatement(id: number, kind: RecordKind): SQL {
  // Raw: the kind rule (`kindCondition`) is written once, in SQL over `p`.
  return sql`SELECT p.id FROM products p WHERE p.id = ${id} AND ${kindCondition(kind)}`;
}

/** The 400 of a tree with more than `MAX_TREE_COMPONENTS` components within the requested depth. */
export function componentTreeTooLarge(depth: number): ApiError {
  return new ApiError(400, {
    code: "COMPONENT_TREE_TOO_LARGE",
    detail:
      `The component tree holds more than ${MAX_TREE_COMPONENTS} components within recursion_depth=${depth}; ` +
      "lower `recursion_depth`, page through `/components`, or export the product.",
  });
}

/**
 * The statements of one page of the direct components of record `id` (ordered by id), with
 * their total and the existence check of the record: `[root, rows, total]` for one batch.
 */
export function componentPageStatements(id: number, kind: RecordKind, page: PageQuery): [root: SQL, rows: SQL, total: SQL] {
  const { limit, offset } = pageWindow(page);
  return [
    rootStatement(id, kind),
    sql`SELECT ${RECORD_COLUMNS} FROM products p ${RECORD_JOINS} WHERE p.parent_id = ${id} ORDER BY p.id LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT count(*) AS total FROM products p WHERE p.parent_id = ${id}`,
  ];
}

/** One page of the direct components of a record of `kind`, and their total; null when there is no such record. */
export async function readComponentPage(
  svc: Pick<Services, "db">,
  id: number,
  kind: RecordKind,
  page: PageQuery,
): Promise<{ rows: RecordRow[]; total: number } | null> {
  const [root, rows, total] = await batchRows<[IdRow, RecordRow, CountRow]>(svc.db, componentPageStatements(id, kind, page));
  return root.length === 0 ? null : { rows, total: total[0]?.total ?? 0 };
}

/** `WITH RECURSIVE tree(id, level)`: the ids below record `id` down to `depth` levels (see `componentTreeStatements`). */
function treeIds(id: number, kind: RecordKind, depth: number): SQL {
  // Raw: a recursive walk down the tree, level by level.
  return sql`WITH RECURSIVE tree(id, level) AS (
      SELECT c.id, 1 FROM products c
      WHERE c.parent_id = ${id} AND EXISTS (SELECT 1 FROM products p WHERE p.id = ${id} AND ${kindCondition(kind)})
      UNION ALL
      SELECT c.id, tree.level + 1 FROM products c JOIN tree ON c.parent_id = tree.id
      WHERE tree.level < ${depth}
      LIMIT ${MAX_TREE_COMPONENTS + 1}
    )`;
}

/**
 * The statements of a tree read: `[root, rows]` for one batch. `rows` is ONE recursive CTE that
 * walks `products_parent_idx` from record `id` down to `depth` levels (level 1: the direct
 * components), stops after `MAX_TREE_COMPONENTS + 1` rows (so a tree that is too large is
 * detected without reading it all), and only starts when the record exists with this kind.
 * Rows come ordered by id, so children pushed in row order are ordered by id. `CROSS JOIN` keeps
 * SQLite's planner from scanning `products` and probing the CTE: the tree drives the join.
 */
export function componentTreeStatements(id: number, kind: RecordKind, depth: number): [root: SQL, rows: SQL] {
  return [
    rootStatement(id, kind),
    sql`${treeIds(id, kind, depth)}
        SELECT ${RECORD_COLUMNS}, tree.level FROM tree CROSS JOIN products p ON p.id = tree.id ${RECORD_JOINS}
        ORDER BY p.id`,
  ];
}

/**
 * The components of record `id` down to `depth` levels, in one round trip, as rows ordered by
 * id (`RecordRow`s, for `nestRows` and the mappers; the tree route reads
 * `readComponentTreeSummaries`, and its test compares the two answers); null when no record of
 * `kind` has the id. More than `MAX_TREE_COMPONENTS`: 400 `COMPONENT_TREE_TOO_LARGE`.
 */
export async function readComponentTree(svc: Pick<Services, "db">, id: number, kind: RecordKind, depth: number): Promise<TreeRow[] | null> {
  const [root, rows] = await batchRows<[IdRow, TreeRow]>(svc.db, componentTreeStatements(id, kind, depth));
  if (root.length === 0) return null;
  if (rows.length > MAX_TREE_COMPONENTS) throw componentTreeTooLarge(depth);
  return rows;
}

/** What the tree answer shows of a record (`ComponentSummary`): `RecordRow` without the columns it does not show. */
export type TreeSummaryRow = Omit<RecordRow, "product_type_name" | "depth">;

/**
 * The tree read as `componentTreeStatements`, selecting only what the answer shows (no product
 * type join, no depth or level): the rows are what crosses from D1, and a tree of 1,000 is most of
 * the route's cost (bench/README.md, Issue 24).
 */
export function componentTreeSummaryStatements(id: number, kind: RecordKind, depth: number): [root: SQL, rows: SQL] {
  return [
    rootStatement(id, kind),
    sql`${treeIds(id, kind, depth)}
        SELECT p.id, p.parent_id, p.owner_id, u.username AS owner_username, u.profile_visibility AS owner_visibility,
          p.name, p.description, p.brand, p.model, p.weight_g, p.height_cm, p.width_cm, p.depth_cm, p.volume_cm3,
          p.circularity_properties, p.product_type_id, p.amount_in_parent, p.version, p.created_at, p.updated_at, p.quality_score
        FROM tree CROSS JOIN products p ON p.id = tree.id JOIN users u ON u.id = p.owner_id
        ORDER BY p.id`,
  ];
}

/** `readComponentTree` with only the columns the answer shows (`TreeSummaryRow`). */
export async function readComponentTreeSummaries(
  svc: Pick<Services, "db">,
  id: number,
  kind: RecordKind,
  depth: number,
): Promise<TreeSummaryRow[] | null> {
  const [root, rows] = await batchRows<[IdRow, TreeSummaryRow]>(svc.db, componentTreeSummaryStatements(id, kind, depth));
  if (root.length === 0) return null;
  if (rows.length > MAX_TREE_COMPONENTS) throw componentTreeTooLarge(depth);
  return rows;
}

/**
 * The JSON text of a nested answer: `rows` (each with a `parent_id`) under `rootId`, each written
 * by `open(row)` (its object without the closing `,"components":[…]}`), children in the order of
 * `rows`, as `nestRows` would nest them. Rows whose parent is neither the root nor another row are
 * left out. Linear in the number of rows; recursion is bounded by the tree's depth.
 */
export function nestedJson<R extends { id: number; parent_id: number | null }>(
  rootId: number,
  rows: readonly R[],
  open: (row: R) => string,
): string {
  const children = new Map<number, R[]>();
  for (const row of rows) {
    if (row.parent_id === null) continue;
    const siblings = children.get(row.parent_id);
    if (siblings) siblings.push(row);
    else children.set(row.parent_id, [row]);
  }
  // Ids already written: rows whose parents loop (which no write makes) cannot recurse for ever.
  const written = new Set<number>();
  const write = (parentId: number): string => {
    const below = children.get(parentId);
    if (!below || written.has(parentId)) return "[]";
    written.add(parentId);
    let out = "[";
    for (let i = 0; i < below.length; i++) {
      const row = below[i]!;
      out += `${i > 0 ? "," : ""}${open(row)},"components":${write(row.id)}}`;
    }
    return `${out}]`;
  };
  return write(rootId);
}

/** A node of a nested answer: the record as `N` and its children. */
export type TreeNode<N> = N & { components: TreeNode<N>[] };

/**
 * Nests `rows` (each with a `parent_id`) under `rootId`: each row becomes `toNode(row)` with its
 * children in `components`, in the order of `rows`. Rows whose parent is neither the root nor
 * another row are left out. Linear in the number of rows.
 */
export function nestRows<R extends { id: number; parent_id: number | null }, N extends object>(
  rootId: number,
  rows: readonly R[],
  toNode: (row: R) => N,
): TreeNode<N>[] {
  const children = new Map<number, TreeNode<N>[]>([[rootId, []]]);
  const nodes = rows.map((row) => {
    const node: TreeNode<N> = { ...toNode(row), components: [] };
    children.set(row.id, node.components);
    return { row, node };
  });
  for (const { row, node } of nodes) {
    if (row.parent_id !== null) children.get(row.parent_id)?.push(node);
  }
  return children.get(rootId)!;
}
