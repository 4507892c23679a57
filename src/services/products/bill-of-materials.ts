import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import { assertMayModify, isModeration, type OwnedRecord } from "../../auth/permissions";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { isConstraintFailure } from "../../db/constraint-errors";
import { billOfMaterials } from "../../db/schema";
import { ApiError, type FieldError, notFound } from "../../lib/problem";
import type { UnitCode } from "./fields";
import { type BomRow, bomEntriesStatement, existingIdsStatement, kindCondition, type RecordKind, readOwnership } from "./records";

// Bills of materials are edited apart from their record: no write here touches the `products`
// row, so a record's `version` and `updated_at` stay as they are (spec: bill-of-materials edits
// do not change `version`).

/** Most entries one record's bill of materials holds (and one request may add or remove). */
export const MAX_BOM_ENTRIES = 100;

/** One entry as a client adds it. */
export interface BomEntryValues {
  material_id: number;
  quantity: number;
  unit: UnitCode;
}

/** The record whose bill of materials is addressed, and the 404 to raise when it is not there (or not the caller's). */
export interface BomRecord {
  id: number;
  kind: RecordKind;
  missing: () => ApiError;
  /** Called when a superuser changes someone else's bill of materials, so the caller can audit it. */
  onModeration?: (owner: OwnedRecord) => void;
}

/** 404 for a material that is not in the record's bill of materials. */
export const entryMissing = (materialId: number) => notFound(`Material ${materialId} is not in this bill of materials.`);

// Raw: the kind rule (`kindCondition`) is written once, in SQL over `p`.
const recordStatement = (record: BomRecord): SQL =>
  sql`SELECT p.owner_id FROM products p WHERE p.id = ${record.id} AND ${kindCondition(record.kind)}`;

/** The bill of materials of a record, in one round trip; the record's 404 when no record of this kind has the id. */
export async function readBom(svc: Pick<Services, "db">, record: BomRecord): Promise<BomRow[]> {
  const [rows, entries] = await batchRows<[{ owner_id: number }, BomRow]>(svc.db, [
    recordStatement(record),
    bomEntriesStatement(record.id),
  ]);
  if (!rows[0]) throw record.missing();
  return entries;
}

/** One entry of a record's bill of materials, in one round trip; 404 for the record, then for the entry. */
export async function readBomEntry(svc: Pick<Services, "db">, record: BomRecord, materialId: number): Promise<BomRow> {
  const [rows, entries] = await batchRows<[{ owner_id: number }, BomRow]>(svc.db, [
    recordStatement(record),
    bomEntriesStatement(record.id, materialId),
  ]);
  if (!rows[0]) throw record.missing();
  const entry = entries[0];
  if (!entry) throw entryMissing(materialId);
  return entry;
}

/** Maps a constraint failure of a write batch (a concurrent writer won the race) to the answer the checks would have given. */
function raceProblem(error: unknown, record: BomRecord): ApiError | null {
  if (isConstraintFailure(error, "UNIQUE", "bill_of_materials")) {
    return new ApiError(409, {
      code: "BOM_ENTRY_EXISTS",
      detail: "A material of the request was added to this bill of materials meanwhile; read it again.",
    });
  }
  if (isConstraintFailure(error, "NOT NULL", "bill_of_materials.quantity")) return bomFull(MAX_BOM_ENTRIES);
  // The record (or a material) was deleted between the checks and the write.
  if (isConstraintFailure(error, "FOREIGN KEY")) return record.missing();
  return null;
}

function bomFull(current: number): ApiError {
  return new ApiError(409, {
    code: "BOM_FULL",
    detail: `A bill of materials holds at most ${MAX_BOM_ENTRIES} entries; this one has ${current}. Remove entries first.`,
  });
}

/**
 * Adds entries to the caller's record, all or none, in two round trips: one batch that reads the
 * owner, the materials named and the entries already there; then one batch of the inserts and the
 * read of the whole list, which is returned. Someone else's record: its 404. Unknown materials:
 * 422 at `pointerOf(index)`. A material already in the bill: 409 `BOM_ENTRY_EXISTS` naming it.
 * More than 100 entries in all: 409 `BOM_FULL` (also enforced inside the write batch, so
 * concurrent adds cannot pass it). Duplicates within `entries` are the caller's to refuse.
 */
export async function addBomEntries(
  svc: Pick<Services, "db">,
  user: SessionUser,
  record: BomRecord,
  entries: readonly BomEntryValues[],
  pointerOf: (index: number) => string,
): Promise<BomRow[]> {
  const ids = entries.map((entry) => entry.material_id);
  const [owners, present, found] = await batchRows<
    [{ owner_id: number }, { material_id: number; material_name: string }, { id: number; name: string }]
  >(svc.db, [recordStatement(record), bomEntriesStatement(record.id), existingIdsStatement("materials", ids)]);
  // Adding is never moderation: only the owner adds materials.
  assertMayModify(user, owners[0] ? { ownerId: owners[0].owner_id } : null, record.missing, "add");

  const known = new Set(found.map((row) => row.id));
  const errors: FieldError[] = [];
  entries.forEach((entry, i) => {
    if (!known.has(entry.material_id)) errors.push({ pointer: pointerOf(i), detail: "No material has this id." });
  });
  if (errors.length > 0)
    throw new ApiError(422, { code: "VALIDATION_FAILED", detail: "The request names materials that do not exist.", errors });

  const clashes = present.filter((row) => ids.includes(row.material_id));
  if (clashes.length > 0) {
    const named = clashes.map((row) => `${row.material_id} (${row.material_name})`).join(", ");
    throw new ApiError(409, {
      code: "BOM_ENTRY_EXISTS",
      detail: `Already in this bill of materials: material ${named}. Change an entry with PATCH on its own path.`,
    });
  }
  if (present.length + entries.length > MAX_BOM_ENTRIES) throw bomFull(present.length);

  // Raw: the bound is the insert's own condition. The quantity turns NULL (NOT NULL fails, the batch
  // rolls back) once the record is full, so it holds even against a concurrent add between the
  // checks above and this batch.
  const inserts = entries.map(
    (entry) => sql`INSERT INTO bill_of_materials (product_id, material_id, quantity, unit)
      SELECT ${record.id}, ${entry.material_id},
        CASE WHEN (SELECT count(*) FROM bill_of_materials WHERE product_id = ${record.id}) < ${MAX_BOM_ENTRIES} THEN ${entry.quantity} END,
        ${entry.unit}`,
  );
  try {
    const results = await batchRows<unknown[]>(svc.db, [...inserts, bomEntriesStatement(record.id)]);
    return results[results.length - 1] as BomRow[];
  } catch (error) {
    throw raceProblem(error, record) ?? error;
  }
}

/** Checks that `user` may correct the record (its owner, or a moderator): one round trip; otherwise its 404. */
async function assertOwner(svc: Pick<Services, "db">, user: SessionUser, record: BomRecord): Promise<void> {
  const owned = await readOwnership(svc, record.id, record.kind);
  assertMayModify(user, owned, record.missing, "correct");
  if (isModeration(user, owned)) record.onModeration?.(owned);
}

/**
 * Changes the quantity and/or unit of one entry (an empty change returns it as it is), in two
 * round trips (ownership, then update and read back). 404 when the entry does not exist.
 */
export async function updateBomEntry(
  svc: Pick<Services, "db">,
  user: SessionUser,
  record: BomRecord,
  materialId: number,
  changes: { quantity?: number | undefined; unit?: UnitCode | undefined },
): Promise<BomRow> {
  await assertOwner(svc, user, record);
  const statements: SQL[] = [];
  if (changes.quantity !== undefined || changes.unit !== undefined) {
    statements.push(
      svc.db
        .update(billOfMaterials)
        .set({
          ...(changes.quantity === undefined ? {} : { quantity: changes.quantity }),
          ...(changes.unit === undefined ? {} : { unit: changes.unit }),
          updated_at: sql`unixepoch()`,
        })
        .where(and(eq(billOfMaterials.product_id, record.id), eq(billOfMaterials.material_id, materialId)))
        .getSQL(),
    );
  }
  const results = await batchRows<unknown[]>(svc.db, [...statements, bomEntriesStatement(record.id, materialId)]);
  const entry = (results[results.length - 1] as BomRow[])[0];
  if (!entry) throw entryMissing(materialId);
  return entry;
}

/** Removes one entry in two round trips (ownership, then delete); 404 when it is not there. */
export async function removeBomEntry(svc: Pick<Services, "db">, user: SessionUser, record: BomRecord, materialId: number): Promise<void> {
  await assertOwner(svc, user, record);
  const [deleted] = await batchRows<[{ material_id: number }]>(svc.db, [
    svc.db
      .delete(billOfMaterials)
      .where(and(eq(billOfMaterials.product_id, record.id), eq(billOfMaterials.material_id, materialId)))
      .returning({ material_id: billOfMaterials.material_id }),
  ]);
  if (deleted.length === 0) throw entryMissing(materialId);
}

/**
 * Removes the entries of the listed materials in two round trips (ownership, then one batch);
 * materials not in the bill are ignored, so the call can be retried.
 */
export async function removeBomEntries(
  svc: Pick<Services, "db">,
  user: SessionUser,
  record: BomRecord,
  materialIds: readonly number[],
): Promise<void> {
  await assertOwner(svc, user, record);
  const statements: SQL[] = [];
  // D1 binds at most 100 parameters per statement.
  for (let i = 0; i < materialIds.length; i += 90) {
    const chunk = materialIds.slice(i, i + 90);
    statements.push(
      svc.db
        .delete(billOfMaterials)
        .where(and(eq(billOfMaterials.product_id, record.id), inArray(billOfMaterials.material_id, chunk)))
        .getSQL(),
    );
  }
  await batchRows<unknown[]>(svc.db, statements);
}
