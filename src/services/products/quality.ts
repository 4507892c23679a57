import { eq, sql } from "drizzle-orm";
import { QueryBuilder } from "drizzle-orm/sqlite-core";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { columnList, type Row } from "../../db/rows";
import { products } from "../../db/schema";
import {
  checkColumn,
  evaluateQuality,
  QUALITY_CHECK_CODES,
  type QualityCheck,
  type QualityCheckCode,
  type QualityInputs,
  type QualityStatus,
} from "../../lib/record-quality";
import { kindCondition, type RecordKind } from "./records";

/**
 * The quality of one record (docs/quality.md): its checks, its score, and for a base product a
 * summary of its whole tree. The checks' statuses and the scores are the stored ones (the
 * generated columns the lists filter on); the details are worked out from the same stored counts
 * and sums by the TypeScript rules. All of it in one D1 round trip: the record, and its tree by
 * `root_id` (every record knows its base product), never walked level by level.
 */

/** Records the tree summary lists, lowest score first. */
export const LOWEST_IN_TREE = 20;

export interface TreeQuality {
  records: number;
  score_mean: number;
  failing: Record<QualityCheckCode, number>;
  lowest: { id: number; name: string; score: number }[];
}

export interface RecordQuality {
  record_id: number;
  score: number;
  checks: QualityCheck[];
  tree?: TreeQuality;
}

const CHECK_COLUMNS = QUALITY_CHECK_CODES.map(checkColumn);

type QualityRow = QualityInputs & { id: number; quality_score: number } & Record<(typeof CHECK_COLUMNS)[number], 0 | 1 | null>;

type TreeRow = { records: number; score_mean: number | null } & Record<`fail_${QualityCheckCode}`, number | null>;

/** The columns of `products` the checks are worked out from, as `QualityRow` names them. */
const INPUT_FIELDS = [
  "id",
  "parent_id",
  "product_type_id",
  "weight_g",
  "height_cm",
  "width_cm",
  "depth_cm",
  "circularity_properties",
  "component_count",
  "unweighed_component_count",
  "components_mass_g",
  "bom_entry_count",
  "bom_mass_entry_count",
  "bom_mass_g",
  "clean_image_count",
  "quality_score",
  ...CHECK_COLUMNS,
] as const satisfies readonly (keyof Row<typeof products> & keyof QualityRow)[];
const INPUT_COLUMNS = columnList(INPUT_FIELDS);

const builder = new QueryBuilder();

const FAIL_COUNTS = sql.raw(QUALITY_CHECK_CODES.map((code) => `coalesce(sum(${checkColumn(code)} = 0), 0) AS fail_${code}`).join(", "));

const STORED_STATUS: Record<0 | 1, QualityStatus> = { 1: "pass", 0: "fail" };

/**
 * The quality of the record of `kind` with `id`, or null when there is none. `onDisagreement` is
 * told when the TypeScript rules would give another status than the stored column (which the
 * property test rules out; a log line if it ever happens in production).
 */
export async function readRecordQuality(svc: Pick<Services, "db" | "log">, id: number, kind: RecordKind): Promise<RecordQuality | null> {
  const [records, trees, lowest] = await batchRows<[QualityRow, TreeRow, { id: number; name: string; score: number }]>(svc.db, [
    // Raw: the kind rule (`kindCondition`) is written once, in SQL over `p`.
    sql`SELECT ${INPUT_COLUMNS} FROM products p WHERE p.id = ${id} AND ${kindCondition(kind)}`,
    kind === "product"
      ? // Raw: one aggregate per check, generated from the list of check codes.
        sql`SELECT count(*) AS records, round(avg(quality_score), 3) AS score_mean, ${FAIL_COUNTS} FROM products WHERE root_id = ${id}`
      : sql`SELECT NULL AS records WHERE 0`,
    kind === "product"
      ? builder
          .select({ id: products.id, name: products.name, score: sql<number>`${products.quality_score}`.as("score") })
          .from(products)
          .where(eq(products.root_id, id))
          .orderBy(products.quality_score, products.id)
          .limit(LOWEST_IN_TREE)
          .getSQL()
      : sql`SELECT NULL AS id WHERE 0`,
  ]);
  const row = records[0];
  if (!row) return null;
  const worked = evaluateQuality(row);
  const checks = worked.checks.map((check) => {
    const stored = row[checkColumn(check.code)];
    const status = stored === null ? "not_applicable" : STORED_STATUS[stored];
    if (status !== check.status) {
      svc.log.warn("quality rules disagree with the stored check", {
        record_id: id,
        code: check.code,
        stored: status,
        rules: check.status,
      });
    }
    return { ...check, status };
  });
  const result: RecordQuality = { record_id: row.id, score: row.quality_score, checks };
  const tree = trees[0];
  if (kind === "product" && tree) {
    result.tree = {
      records: tree.records,
      score_mean: tree.score_mean ?? 1,
      failing: Object.fromEntries(QUALITY_CHECK_CODES.map((code) => [code, tree[`fail_${code}`] ?? 0])) as Record<QualityCheckCode, number>,
      lowest,
    };
  }
  return result;
}
