import { and, asc, count, eq, sql } from "drizzle-orm";
import { ownedBySql } from "../../../auth/permissions";
import type { Services } from "../../../container";
import { batchRows } from "../../../db/client";
import { columnList, columnsOf, type Row, type RowOf } from "../../../db/rows";
import { products, users } from "../../../db/schema";
import type { PageQuery } from "../../../lib/pagination";
import { pageWindow } from "../../../lib/pagination";
import { ApiError, notFound } from "../../../lib/problem";
import type { UploadTarget } from "../../../services/media/media";
import { cameras } from "../schema";

/** The columns of a camera the read statements select, and RETURNING returns (never its key). */
const CAMERA_FIELDS = [
  "id",
  "owner_id",
  "name",
  "description",
  "last_seen_at",
  "created_at",
  "updated_at",
] as const satisfies readonly (keyof Row<typeof cameras>)[];

export type CameraRow = RowOf<typeof cameras, (typeof CAMERA_FIELDS)[number]>;

/** `CameraRow`'s columns for the builder's selects and `returning`. */
const cameraColumns = columnsOf(cameras, CAMERA_FIELDS);
/** The same columns for hand-written SQL. */
export const CAMERA_COLUMNS = columnList(CAMERA_FIELDS);

/** R2 key of a camera's latest preview thumbnail (private: served to the owner only, by the API). */
export const previewThumbnailKey = (cameraId: string) => `cameras/${cameraId}/preview-thumbnail`;

/** Cameras are private: their owner alone sees and changes them (`ownedBySql`); superusers do not moderate them. */
const ownCamera = (ownerId: number) => ownedBySql(ownerId, sql`${cameras.owner_id}`);
const ownedCamera = (ownerId: number, id: string) => and(eq(cameras.id, id), ownCamera(ownerId));

/** Another user's camera and an unknown id answer alike (existence is not revealed). */
export const cameraNotFound = () => notFound("You have no camera with this id.", "CAMERA_NOT_FOUND");

/** One page of the owner's cameras, oldest first, and their count: one round trip. */
export async function listCameras(
  svc: Pick<Services, "db">,
  ownerId: number,
  page: PageQuery,
): Promise<{ rows: CameraRow[]; total: number }> {
  const { limit, offset } = pageWindow(page);
  const [rows, counts] = await batchRows<[CameraRow, { total: number }]>(svc.db, [
    svc.db
      .select(cameraColumns)
      .from(cameras)
      .where(ownCamera(ownerId))
      .orderBy(asc(cameras.created_at), sql`rowid`)
      .limit(limit)
      .offset(offset),
    svc.db
      .select({ total: count().as("total") })
      .from(cameras)
      .where(ownCamera(ownerId)),
  ]);
  return { rows, total: counts[0]?.total ?? 0 };
}

/**
 * The camera `id` of `ownerId`; 404 for anyone else's. Cameras are private to their owner: unlike
 * research records, superusers do not moderate them.
 */
export async function readOwnedCamera(svc: Pick<Services, "db">, ownerId: number, id: string): Promise<CameraRow> {
  const rows = await svc.db.all<CameraRow>(svc.db.select(cameraColumns).from(cameras).where(ownedCamera(ownerId, id)));
  if (!rows[0]) throw cameraNotFound();
  return rows[0];
}

/** Renames or redescribes an owned camera; members left undefined stay. One round trip. */
export async function updateCamera(
  svc: Pick<Services, "db">,
  ownerId: number,
  id: string,
  changes: { name?: string; description?: string | null },
): Promise<CameraRow> {
  if (changes.name === undefined && changes.description === undefined) return readOwnedCamera(svc, ownerId, id);
  const rows = await svc.db.all<CameraRow>(
    svc.db
      .update(cameras)
      .set({ name: changes.name, description: changes.description, updated_at: sql`unixepoch()` })
      .where(ownedCamera(ownerId, id))
      .returning(cameraColumns),
  );
  if (!rows[0]) throw cameraNotFound();
  return rows[0];
}

/**
 * Deletes a camera (its used assertion ids and any pairing go with it): from then on its
 * assertions are refused. With `ownerId`, only that owner's (else 404); without, the device
 * unpairing itself. One round trip.
 */
export async function deleteCamera(svc: Pick<Services, "db">, id: string, ownerId: number | null): Promise<void> {
  const which = ownerId === null ? eq(cameras.id, id) : ownedCamera(ownerId, id);
  const rows = await svc.db.all<{ id: string }>(svc.db.delete(cameras).where(which).returning({ id: cameras.id }));
  if (!rows[0]) throw cameraNotFound();
}

/**
 * What a capture needs, in one round trip: the caller's camera (404 otherwise) and the caller's
 * record the image goes to, a base product or a component (404 otherwise: someone else's
 * record is not revealed).
 */
export async function readCaptureTarget(
  svc: Pick<Services, "db">,
  ownerId: number,
  cameraId: string,
  productId: number,
): Promise<{ kind: "product" | "component" }> {
  const [owned, records] = await batchRows<[{ id: string }, { parent_id: number | null }]>(svc.db, [
    svc.db.select({ id: cameras.id }).from(cameras).where(ownedCamera(ownerId, cameraId)),
    // A capture adds an image: the write rule's `add`, the record's owner alone.
    svc.db
      .select({ parent_id: products.parent_id })
      .from(products)
      .where(and(eq(products.id, productId), ownedBySql(ownerId, sql`${products.owner_id}`))),
  ]);
  if (!owned[0]) throw cameraNotFound();
  const record = records[0];
  if (!record) throw productNotFound();
  return { kind: record.parent_id === null ? "product" : "component" };
}

/** The capture's product is missing or not the camera owner's. */
export const productNotFound = () => notFound("You have no base product or component with this id.", "PRODUCT_NOT_FOUND");

/**
 * Where a device upload goes, in one round trip: the camera owner's record `productId` (a base
 * product or a component; 404 for anyone else's) with the owner's usage, whose quota is charged.
 * 403 while the owner's email address is unverified.
 */
export async function readDeviceUploadTarget(
  svc: Pick<Services, "db">,
  ownerId: number,
  productId: number,
): Promise<{ kind: "product" | "component"; target: UploadTarget }> {
  const rows = await svc.db.all<{
    parent_id: number | null;
    role: "contributor" | "lab";
    is_verified: number;
    upload_file_count: number;
    upload_total_bytes: number;
  }>(
    svc.db
      .select({
        parent_id: products.parent_id,
        role: users.role,
        is_verified: users.is_verified,
        upload_file_count: users.upload_file_count,
        upload_total_bytes: users.upload_total_bytes,
      })
      .from(products)
      .innerJoin(users, eq(users.id, products.owner_id))
      .where(and(eq(products.id, productId), ownedBySql(ownerId, sql`${products.owner_id}`))),
  );
  const row = rows[0];
  if (!row) throw productNotFound();
  // Records only grow with a verified account, whoever sends the bytes (an email change unverifies).
  if (row.is_verified !== 1) {
    throw new ApiError(403, {
      code: "OWNER_NOT_VERIFIED",
      detail: "The camera's owner must verify their email address before captures are stored.",
    });
  }
  return {
    kind: row.parent_id === null ? "product" : "component",
    target: { ownerId, ownerRole: row.role, fileCount: row.upload_file_count, totalBytes: row.upload_total_bytes },
  };
}
