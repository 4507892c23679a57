import { eq, type Placeholder, type SQL, sql } from "drizzle-orm";
import { QueryBuilder } from "drizzle-orm/sqlite-core";
import { maySeeUnsettled } from "../../auth/permissions";
import type { SessionUser } from "../../auth/session-user";
import { columnsOf, type Row, type RowOf } from "../../db/rows";
import { files, images, type MEDIA_REJECTIONS, type MEDIA_STATUSES } from "../../db/schema";

/**
 * What the reads of products and components, and the export, need of their images and research
 * files: the rows, which of them are shown, and where they are served.
 */

/** `pending` until the media job settles it, then `clean` or `rejected`. */
export type MediaStatus = (typeof MEDIA_STATUSES)[number];

/** Why a `rejected` upload was; null otherwise. */
export type MediaRejection = (typeof MEDIA_REJECTIONS)[number];

/** A research file as the reads select it (`FILE_FIELDS`). */
export type FileRow = RowOf<typeof files, (typeof FILE_FIELDS)[number]>;

/** An image as the reads select it (`IMAGE_FIELDS`). */
export type ImageRow = RowOf<typeof images, (typeof IMAGE_FIELDS)[number]>;

/** Width of the thumbnail a record's or an image's `thumbnail_url` names; 800 and 1600 exist too. */
export const THUMBNAIL_WIDTHS = [200, 800, 1600] as const;
export const LISTED_THUMBNAIL_WIDTH = 200;

/**
 * Media shown to everyone, and the only media exports, statistics and profiles count: `clean`.
 * Pending and rejected media is never served; only the record's owner and a moderator see it
 * listed (`maySeeUnsettled`, src/auth/permissions.ts).
 */
export const SHOWN_MEDIA_CONDITION = "status = 'clean'";

/** Columns of `ImageRow`, as the reads select them from `images`. */
export const IMAGE_FIELDS = [
  "id",
  "product_id",
  "storage_key",
  "filename",
  "description",
  "image_metadata",
  "thumbnails_ready",
  "status",
  "rejected_reason",
  "created_at",
] as const satisfies readonly (keyof Row<typeof images>)[];

/** Columns of `FileRow`, as the reads select them from `files`. */
export const FILE_FIELDS = [
  "id",
  "product_id",
  "storage_key",
  "filename",
  "description",
  "status",
  "rejected_reason",
  "created_at",
] as const satisfies readonly (keyof Row<typeof files>)[];

/** Media order everywhere: oldest first, and in upload order within a second (the table's rowid; ids are random). */
export const MEDIA_ORDER = "created_at, rowid";

/** `MEDIA_ORDER` for an `ORDER BY`, its columns qualified by `alias` when given (`rowid` has no column in the schema). */
export function mediaOrder(alias?: string): SQL {
  return sql.raw(
    alias
      ? MEDIA_ORDER.split(", ")
          .map((column) => `${alias}.${column}`)
          .join(", ")
      : MEDIA_ORDER,
  );
}

// The detail read's statements are built without a client (`detailStatements` hands them to its batch, rendered once).
const builder = new QueryBuilder();

/**
 * Every image of record `id`, whatever its status, oldest first: the detail read shows the
 * unsettled ones to those who may see them (`visibleMedia`).
 */
export function imagesOfRecord(id: number | Placeholder): SQL {
  return builder.select(columnsOf(images, IMAGE_FIELDS)).from(images).where(eq(images.product_id, id)).orderBy(mediaOrder()).getSQL();
}

/** Every research file of record `id`, whatever its status, oldest first (see `imagesOfRecord`). */
export function filesOfRecord(id: number | Placeholder): SQL {
  return builder.select(columnsOf(files, FILE_FIELDS)).from(files).where(eq(files.product_id, id)).orderBy(mediaOrder()).getSQL();
}

/** The media rows `viewer` may see of a record owned by `ownerId`: all of them, or the clean ones. */
export function visibleMedia<T extends { status: MediaStatus }>(rows: T[], viewer: SessionUser | null, ownerId: number): T[] {
  return maySeeUnsettled(viewer, ownerId) ? rows : rows.filter((row) => row.status === "clean");
}

/** Absolute URL of an upload: `<origin>/uploads/images|files/<storage key>`. */
export function uploadUrl(origin: string, kind: "images" | "files", storageKey: string): string {
  return `${origin}/uploads/${kind}/${storageKey}`;
}

/** R2 key (under `images/`) of the thumbnail of `storageKey` at `width`. */
export function thumbnailKey(storageKey: string, width: number): string {
  return `thumbnails/${width}/${storageKey}`;
}

/**
 * Absolute URL of an image's listed thumbnail; the image itself until the media queue has made
 * the thumbnails, so a client always has something to show.
 */
export function thumbnailUrl(origin: string, image: Pick<ImageRow, "storage_key" | "thumbnails_ready">): string {
  const key = image.thumbnails_ready ? thumbnailKey(image.storage_key, LISTED_THUMBNAIL_WIDTH) : image.storage_key;
  return uploadUrl(origin, "images", key);
}
