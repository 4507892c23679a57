import { type SQL, sql } from "drizzle-orm";

// Records whose deletion is under way (docs/storage.md, "Deletion jobs"). A deletion too large for
// one batch first hides the record in one small batch: its row is detached from its parent (its
// `parent_id` points at itself, so no list, child list or tree walk reaches it, and a base product
// leaves every `parent_id IS NULL` read at once) and named in `hidden_records`. What is below it
// stays reachable only by id, which `visibleComponent` closes; the deletion queue then removes
// the rows in slices.

/**
 * The ids of record `alias` and every record above it: its parent links followed up to the base
 * product, or to a hidden record, whose link points at itself (`UNION` drops the repeat, so the
 * walk ends there). At most 11 rows: components nest at most 10 levels below a base product.
 */
export function ancestorsOrSelf(alias: string): SQL {
  return sql.raw(`WITH RECURSIVE up(id, parent_id) AS (
      SELECT ${alias}.id, ${alias}.parent_id
      UNION SELECT q.id, q.parent_id FROM products q JOIN up ON q.id = up.parent_id)
    SELECT id FROM up`);
}

/**
 * SQL that holds while component `alias` is not under a record being deleted. With no deletion
 * under way in its tree (nearly always) this costs one look into an empty index range; otherwise
 * the walk up from the record, at most ten steps.
 */
export function visibleComponent(alias: string): SQL {
  return sql`NOT EXISTS (SELECT 1 FROM hidden_records h WHERE h.root_id = ${sql.raw(alias)}.root_id
    AND (h.record_id = h.root_id OR h.record_id IN (${ancestorsOrSelf(alias)})))`;
}

/** The statement that detaches record `id` from its parent: its `parent_id` then points at itself (the CHECKs of a component hold). */
export function detachStatement(ids: SQL): SQL {
  return sql`UPDATE products SET parent_id = id, amount_in_parent = coalesce(amount_in_parent, 1), depth = max(depth, 1)
    WHERE id IN (${ids}) AND parent_id IS NOT id`;
}
