import { sql } from "drizzle-orm";
import { ownedBySql } from "../../../auth/permissions";
import type { Services } from "../../../container";
import { batchRows } from "../../../db/client";
import type { Row, RowOf } from "../../../db/rows";
import type { PageQuery } from "../../../lib/pagination";
import { pageWindow } from "../../../lib/pagination";
import { ApiError, notFound } from "../../../lib/problem";
import type { UploadTarget } from "../../../services/media/media";
import type { cameras } from "../schema";

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

export const CAMERA_COLUMNS = sql.raw(CAMERA_FIELDS.join(", "));

/** R2 key of a camera's latest preview thumbnail (private: served to the owner only, by the API). */
export const previewThumbnailKey = (cameraId: string) => `cameras/${cameraId}/preview-thumbnail`;

/** Cameras are private: their owner alone sees and changes them (`ownedBySql`); superusers do not moderate them. */
const ownCamera = (ownerId: number) => ownedBySql(ownerId, sql.raw("owner_id"));

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
    sql`SELECT ${CAMERA_COLUMNS} FROM cameras WHERE ${ownCamera(ownerId)} ORDER BY created_at, rowid LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT count(*) AS total FROM cameras WHERE ${ownCamera(ownerId)}`,
  ]);
  return { rows, total: counts[0]?.total ?? 0 };
}

/**
 * The camera `id` of `ownerId`; 404 for anyone else's. Cameras are private to their owner: unlike
 * research records, superusers do not moderate them.
 */
export async function readOwnedCamera(svc: Pick<Services, "db">, ownerId: number, id: string): Promise<CameraRow> {
  const rows = await svc.db.all<CameraRow>(sql`SELECT ${CAMERA_COLUMNS} FROM cameras WHERE id = ${id} AND ${ownCamera(ownerId)}`);
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
  const sets = [
    ...(changes.name !== undefined ? [sql`name = ${changes.name}`] : []),
    ...(changes.description !== undefined ? [sql`description = ${changes.description}`] : []),
  ];
  if (sets.length === 0) return readOwnedCamera(svc, ownerId, id);
  const rows = await svc.db.all<CameraRow>(
    sql`UPDATE cameras SET ${sql.join(sets, sql`, `)}, updated_at = unixepoch()
        WHERE id = ${id} AND ${ownCamera(ownerId)} RETURNING ${CAMERA_COLUMNS}`,
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
  const owned = ownerId === null ? sql`` : sql` AND ${ownCamera(ownerId)}`;
  const rows = await svc.db.all<{ id: string }>(sql`DELETE FROM cameras WHERE id = ${id}${owned} RETURNING id`);
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
    sql`SELECT id FROM cameras WHERE id = ${cameraId} AND ${ownCamera(ownerId)}`,
    // A capture adds an image: the write rule's `add`, the record's owner alone.
    sql`SELECT parent_id FROM products WHERE id = ${productId} AND ${ownedBySql(ownerId, sql.raw("owner_id"))}`,
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
    sql`SELECT p.parent_id, u.role, u.is_verified, u.upload_file_count, u.upload_total_bytes
        FROM products p JOIN users u ON u.id = p.owner_id WHERE p.id = ${productId} AND ${ownedBySql(ownerId, sql.raw("p.owner_id"))}`,
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
