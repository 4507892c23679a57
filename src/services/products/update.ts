import { type SQL, sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { isConstraintFailure } from "../../db/constraint-errors";
import { ApiError } from "../../lib/problem";
import { normalizeBrand, normalizeCircularity, type RecordFields } from "./fields";
import type { RecordDetail, RecordRow } from "./records";

/** The members a PATCH may change, as validated by the route. */
export interface RecordChanges extends Partial<RecordFields> {
  amount_in_parent?: number;
}

type Column = Exclude<keyof RecordChanges, never>;

/**
 * The version an `If-Match` header names. It must be exactly one quoted version (`"3"`):
 * missing is 428, anything else (`*`, a weak tag, several values, no quotes) 412.
 */
export function versionFromIfMatch(header: string | undefined): number {
  if (header === undefined) {
    throw new ApiError(428, {
      code: "IF_MATCH_REQUIRED",
      detail: 'Send the record\'s version in If-Match, quoted, e.g. If-Match: "3" (the `version` of the last read).',
    });
  }
  const match = /^\s*"([1-9]\d{0,15})"\s*$/.exec(header);
  if (!match) {
    throw new ApiError(412, {
      code: "IF_MATCH_INVALID",
      detail: 'If-Match must be exactly one quoted version, e.g. "3"; the ETag of a read is not a version.',
    });
  }
  return Number(match[1]);
}

/** The stored form of every member the body names, after normalisation. */
function storedValues(changes: RecordChanges): Partial<Record<Column, string | number | null>> {
  const values: Partial<Record<Column, string | number | null>> = {};
  for (const [key, value] of Object.entries(changes) as [Column, unknown][]) {
    if (value === undefined) continue;
    if (key === "brand") values.brand = normalizeBrand(value as string | null);
    else if (key === "circularity_properties")
      values.circularity_properties = normalizeCircularity(value as RecordChanges["circularity_properties"]);
    else values[key] = value as string | number | null;
  }
  return values;
}

/**
 * Applies a PATCH to `current` (already read and found to be the caller's) as one conditional
 * UPDATE: it lands only if the version is still `expected`, so of two concurrent PATCHes naming
 * the same version one wins and the other gets 412. A PATCH that changes nothing succeeds
 * whatever version it names and changes neither `version` nor `updated_at`.
 */
export async function updateRecord(
  svc: Pick<Services, "db">,
  current: RecordDetail,
  changes: RecordChanges,
  expected: number,
): Promise<RecordDetail> {
  const values = storedValues(changes);
  const changed = (Object.keys(values) as Column[]).filter((column) => values[column] !== current.row[column]);
  if (changed.length === 0) return current;

  // Raw: compare-and-set on the version the client read (If-Match), with only the changed columns.
  const assignments = changed.map((column) => sql`${sql.identifier(column)} = ${values[column]}`);
  const update: SQL = sql`UPDATE products SET ${sql.join(assignments, sql`, `)}, version = version + 1, updated_at = unixepoch()
    WHERE id = ${current.row.id} AND version = ${expected}
    RETURNING version, updated_at, volume_cm3, quality_score`;
  const typeId = changed.includes("product_type_id") ? (values.product_type_id as number | null) : null;
  const typeName = sql`SELECT name FROM product_types WHERE id = ${typeId}`;
  let updated: { version: number; updated_at: number; volume_cm3: number | null; quality_score: number }[];
  let types: { name: string }[];
  try {
    [updated, types] = await batchRows<[(typeof updated)[number], { name: string }]>(svc.db, [update, typeName]);
  } catch (error) {
    if (isConstraintFailure(error, "FOREIGN KEY")) {
      throw new ApiError(422, {
        code: "VALIDATION_FAILED",
        detail: "The request names records that do not exist.",
        errors: [{ pointer: "/product_type_id", detail: "No product type has this id." }],
      });
    }
    throw error;
  }
  const row = updated[0];
  if (!row) {
    throw new ApiError(412, {
      code: "VERSION_MISMATCH",
      detail: `The record changed since version ${expected}; read it again and resend your change with the new version.`,
    });
  }
  const next: RecordRow = {
    ...current.row,
    ...(values as Partial<RecordRow>),
    version: row.version,
    updated_at: row.updated_at,
    volume_cm3: row.volume_cm3,
    quality_score: row.quality_score,
  };
  if (changed.includes("product_type_id")) next.product_type_name = typeId === null ? null : (types[0]?.name ?? null);
  return { ...current, row: next };
}
