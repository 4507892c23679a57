import { and, count, eq, ne, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { mayModifySql, maySeeUnsettled, ownedBySql } from "../../auth/permissions";
import type { SessionUser } from "../../auth/session-user";
import type { CarriedViewer } from "../../auth/viewer";
import type { Services } from "../../container";
import { batchRows, type Db } from "../../db/client";
import { columnList, columnsOf } from "../../db/rows";
import { files, images, products, users } from "../../db/schema";
import type { PageQuery } from "../../lib/pagination";
import { pageWindow } from "../../lib/pagination";
import { ApiError, notFound } from "../../lib/problem";
import { kindCondition, type RecordKind } from "../products/records";
import { ROLE_LIMITS } from "./quotas";
import { FILE_FIELDS, type FileRow, IMAGE_FIELDS, type ImageRow, type MediaRejection, mediaOrder, SHOWN_MEDIA_CONDITION } from "./records";
import type { MediaKind } from "./storage";

// Media rows are written apart from their record: nothing here touches the `products` row, so a
// record's `version` stays (spec); the detail read's ETag changes because it covers the media.

export type MediaRow<K extends MediaKind> = K extends "images" ? ImageRow : FileRow;

/** The record media is attached to, and the 404 it answers when missing (or someone else's, for writes). */
export interface MediaParent {
  id: number;
  kind: RecordKind;
  missing: () => ApiError;
}

/** What an upload needs of its record: the owner, whose quota is charged, and the owner's usage. */
export interface UploadTarget {
  ownerId: number;
  ownerRole: "contributor" | "lab";
  fileCount: number;
  totalBytes: number;
}

const FIELDS = { images: IMAGE_FIELDS, files: FILE_FIELDS } as const;
const TABLES = { images, files } as const;
// The media table as `m` and the record as `p`: the conditions written in SQL (`visibleCondition`, `kindCondition`) name them so.
const MEDIA_AS_M = { images: alias(images, "m"), files: alias(files, "m") } as const;
const p = alias(products, "p");

/** The columns a media read selects (`IMAGE_FIELDS`, `FILE_FIELDS`) from the media table as `m`. */
const mediaFields = (kind: MediaKind) =>
  kind === "images" ? columnsOf(MEDIA_AS_M.images, IMAGE_FIELDS) : columnsOf(MEDIA_AS_M.files, FILE_FIELDS);

export const mediaMissing = (kind: MediaKind) =>
  notFound(kind === "images" ? "The record has no image with this id." : "The record has no research file with this id.");

const parentStatement = (db: Db, parent: MediaParent) =>
  db
    .select({ owner_id: p.owner_id })
    .from(p)
    .where(and(eq(p.id, parent.id), kindCondition(parent.kind)));

/** The role of the owner of the record `parent` names (none when there is no such record). */
const ownerRoleStatement = (db: Db, parent: MediaParent) =>
  db
    .select({ role: users.role })
    .from(p)
    .innerJoin(users, eq(users.id, p.owner_id))
    .where(and(eq(p.id, parent.id), kindCondition(parent.kind)));

/**
 * Who lists media: an account whose powers are known, nobody, or `{ provisional: id }`: the account
 * a token names while the token's check travels in the same batch, read as that account without
 * moderator powers (the caller reads again if the check finds otherwise).
 */
export type MediaViewer = SessionUser | null | { provisional: number };

/**
 * The media of the record `viewer` sees, as SQL over `m`: every item for whoever may see unsettled
 * media (`maySeeUnsettled`: the owner and a superuser with TOTP), the clean ones for everyone else.
 * Raw: the shown-media rule and the write rule are written once, in SQL (`SHOWN_MEDIA_CONDITION`, `mayModifySql`).
 */
function visibleCondition(parent: MediaParent, viewer: MediaViewer): SQL {
  const clean = sql.raw(`m.${SHOWN_MEDIA_CONDITION}`);
  if (viewer === null) return clean;
  const owner = sql`(SELECT owner_id FROM products WHERE id = ${parent.id})`;
  if ("provisional" in viewer) return sql`(${clean} OR ${ownedBySql(viewer.provisional, owner)})`;
  return sql`(${clean} OR ${mayModifySql(viewer, owner)})`;
}

/**
 * One page of the record's media that `viewer` sees (`visibleCondition`), oldest first, and
 * their count: one round trip.
 */
export async function readMediaPage<K extends MediaKind>(
  svc: Pick<Services, "db">,
  parent: MediaParent,
  kind: K,
  page: PageQuery,
  viewer: MediaViewer,
) {
  const m = MEDIA_AS_M[kind];
  const where = and(eq(m.product_id, parent.id), visibleCondition(parent, viewer));
  const { limit, offset } = pageWindow(page);
  const [owners, rows, counts] = await batchRows<[{ owner_id: number }, MediaRow<K>, { total: number }]>(svc.db, [
    parentStatement(svc.db, parent),
    svc.db.select(mediaFields(kind)).from(m).where(where).orderBy(mediaOrder("m")).limit(limit).offset(offset),
    svc.db
      .select({ total: count().as("total") })
      .from(m)
      .where(where),
  ]);
  if (!owners[0]) throw parent.missing();
  return { rows, total: counts[0]?.total ?? 0 };
}

/**
 * One media item of the record. Pending and rejected media is shown to the record's owner (and a
 * superuser with TOTP) only; anyone else gets the same 404 as for an unknown id. The viewer comes
 * with the read (`CarriedViewer.after`): a token check carried in its batch has answered by then.
 */
export async function readMediaItem<K extends MediaKind>(
  svc: Pick<Services, "db">,
  parent: MediaParent,
  kind: K,
  mediaId: string,
  viewer: CarriedViewer,
) {
  const [[owners, rows], user] = await viewer.after(
    batchRows<[{ owner_id: number }, MediaRow<K>]>(svc.db, [
      parentStatement(svc.db, parent),
      svc.db
        .select(mediaFields(kind))
        .from(MEDIA_AS_M[kind])
        .where(and(eq(MEDIA_AS_M[kind].id, mediaId), eq(MEDIA_AS_M[kind].product_id, parent.id))),
    ]),
  );
  const owner = owners[0];
  if (!owner) throw parent.missing();
  const row = rows[0];
  if (!row) throw mediaMissing(kind);
  if (row.status !== "clean" && !maySeeUnsettled(user, owner.owner_id)) throw mediaMissing(kind);
  return row;
}

/** The record an upload goes to, with its owner's role and usage; null when there is no record of this kind. */
export async function readUploadTarget(svc: Pick<Services, "db">, parent: MediaParent): Promise<UploadTarget | null> {
  const rows = await svc.db.all<{ owner_id: number; role: "contributor" | "lab"; upload_file_count: number; upload_total_bytes: number }>(
    svc.db
      .select({
        owner_id: p.owner_id,
        role: users.role,
        upload_file_count: users.upload_file_count,
        upload_total_bytes: users.upload_total_bytes,
      })
      .from(p)
      .innerJoin(users, eq(users.id, p.owner_id))
      .where(and(eq(p.id, parent.id), kindCondition(parent.kind))),
  );
  const row = rows[0];
  return row ? { ownerId: row.owner_id, ownerRole: row.role, fileCount: row.upload_file_count, totalBytes: row.upload_total_bytes } : null;
}

/** 403 when one more upload of `sizeBytes` would take the owner past the quota of their role. */
export function assertWithinQuota(target: UploadTarget, sizeBytes: number): void {
  const limits = ROLE_LIMITS[target.ownerRole];
  if (target.fileCount + 1 > limits.uploadQuotaFiles) {
    throw new ApiError(403, {
      code: "UPLOAD_QUOTA_EXCEEDED",
      detail: `The record's owner has used all ${limits.uploadQuotaFiles} uploads of their quota; delete media to free some.`,
    });
  }
  if (target.totalBytes + sizeBytes > limits.uploadQuotaBytes) {
    throw new ApiError(403, {
      code: "UPLOAD_QUOTA_EXCEEDED",
      detail:
        `This upload of ${sizeBytes} bytes would take the record's owner past their quota of ${limits.uploadQuotaBytes} bytes ` +
        `(${target.totalBytes} used); delete media to free some.`,
    });
  }
}

// The quota of the owner's role, as SQL over `u` (users): the write re-checks what the handler
// checked, so two uploads racing for the last slot cannot both land.
const quotaCondition = (sizeBytes: number): SQL =>
  sql`u.upload_file_count + 1 <= CASE u.role WHEN 'lab' THEN ${ROLE_LIMITS.lab.uploadQuotaFiles} ELSE ${ROLE_LIMITS.contributor.uploadQuotaFiles} END
      AND u.upload_total_bytes + ${sizeBytes} <= CASE u.role WHEN 'lab' THEN ${ROLE_LIMITS.lab.uploadQuotaBytes} ELSE ${ROLE_LIMITS.contributor.uploadQuotaBytes} END`;

/** A media row about to be written; `width`, `height` and `image_metadata` only for images. */
export interface NewMedia {
  id: string;
  storageKey: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  description: string | null;
  uploadedBy: number;
  image?: { width: number; height: number; metadata: string | null };
}

/**
 * Inserts a `pending` media row and charges it to the record owner's quota, in ONE batch: the
 * insert happens only while the owner is within quota, and the charge only if the row went in.
 * Returns the row; 404 when the record went away meanwhile, 403 when the quota ran out meanwhile.
 */
export async function insertMedia<K extends MediaKind>(
  svc: Pick<Services, "db">,
  parent: MediaParent,
  kind: K,
  media: NewMedia,
): Promise<MediaRow<K>> {
  const now = Math.floor(Date.now() / 1000);
  const common = sql`${media.id}, p.id, ${media.storageKey}, ${media.filename}, ${media.contentType}, ${media.sizeBytes}, ${media.description}, 'pending', ${media.uploadedBy}, ${now}, ${now}`;
  const insert =
    kind === "images"
      ? sql`INSERT INTO images (id, product_id, storage_key, filename, content_type, size_bytes, description, status, uploaded_by, created_at, updated_at, width, height, image_metadata, thumbnails_ready)
          SELECT ${common}, ${media.image!.width}, ${media.image!.height}, ${media.image!.metadata}, 0`
      : sql`INSERT INTO files (id, product_id, storage_key, filename, content_type, size_bytes, description, status, uploaded_by, created_at, updated_at)
          SELECT ${common}`;
  const [inserted, , targets] = await batchRows<[MediaRow<K>, unknown, { role: "contributor" | "lab" }]>(svc.db, [
    // Raw: INSERT … SELECT whose own condition is the owner's quota (`quotaCondition`): a race for the last slot lands once.
    sql`${insert} FROM products p JOIN users u ON u.id = p.owner_id
        WHERE p.id = ${parent.id} AND ${kindCondition(parent.kind)} AND ${quotaCondition(media.sizeBytes)}
        RETURNING ${columnList(FIELDS[kind])}`,
    // Raw: the charge is guarded by the row's existence, so it happens only when the insert did.
    sql`UPDATE users SET upload_file_count = upload_file_count + 1, upload_total_bytes = upload_total_bytes + ${media.sizeBytes}
        WHERE id = (SELECT owner_id FROM products WHERE id = ${parent.id})
          AND EXISTS (SELECT 1 FROM ${TABLES[kind]} WHERE id = ${media.id})`,
    ownerRoleStatement(svc.db, parent),
  ]);
  const row = inserted[0];
  if (row) return row;
  if (!targets[0]) throw parent.missing();
  throw new ApiError(403, {
    code: "UPLOAD_QUOTA_EXCEEDED",
    detail: "The record owner's upload quota ran out while this upload was being stored.",
  });
}

/** What a media deletion leaves for the caller: the objects to remove, unless other rows share them. */
export interface DeletedMedia {
  storageKey: string;
  status: string;
  /** Whether other rows (equal bytes) that are not rejected still use the object. */
  shared: boolean;
}

/**
 * Deletes one media row and releases its size from the owner's quota (unless it was rejected:
 * that released it already), in one batch that also tells whether other rows share the object.
 * Only an item of `parent` (else the media 404).
 */
export async function deleteMedia(svc: Pick<Services, "db">, parent: MediaParent, kind: MediaKind, mediaId: string): Promise<DeletedMedia> {
  const table = TABLES[kind];
  const item = sql`SELECT size_bytes FROM ${table} WHERE id = ${mediaId} AND product_id = ${parent.id} AND status <> 'rejected'`;
  const storageKey = svc.db.select({ storage_key: table.storage_key }).from(table).where(eq(table.id, mediaId));
  const [sharing, , deleted] = await batchRows<[{ sharing: number }, unknown, { storage_key: string; status: string }]>(svc.db, [
    svc.db
      .select({ sharing: count().as("sharing") })
      .from(table)
      .where(and(eq(table.storage_key, storageKey), ne(table.id, mediaId), ne(table.status, "rejected"))),
    // Raw: the release is guarded by the row's state (`item`), read in the same statement, before the row goes.
    sql`UPDATE users SET upload_file_count = max(upload_file_count - 1, 0), upload_total_bytes = max(upload_total_bytes - (${item}), 0)
        WHERE id = (SELECT p.owner_id FROM ${table} m JOIN products p ON p.id = m.product_id WHERE m.id = ${mediaId}) AND EXISTS (${item})`,
    svc.db
      .delete(table)
      .where(and(eq(table.id, mediaId), eq(table.product_id, parent.id)))
      .returning({ storage_key: table.storage_key, status: table.status }),
  ]);
  const row = deleted[0];
  if (!row) throw mediaMissing(kind);
  return { storageKey: row.storage_key, status: row.status, shared: (sharing[0]?.sharing ?? 0) > 0 };
}

/**
 * Marks an upload `rejected` (with why) and releases its size from the owner's quota, in one
 * batch, only while it is still in the state `from` (`pending`, or `clean` for an image published
 * before it was decoded): a job delivered twice, or racing a deletion, changes nothing the second
 * time. Returns the storage key, or null when the row was not in that state (or is gone). The
 * caller removes the bytes (`deleteUnreferencedObjects` spares those other rows still use).
 */
export async function rejectMedia(
  svc: Pick<Services, "db">,
  kind: MediaKind,
  mediaId: string,
  reason: MediaRejection,
  from: "pending" | "clean",
): Promise<string | null> {
  const table = TABLES[kind];
  const item = sql`SELECT size_bytes FROM ${table} WHERE id = ${mediaId} AND status = ${from}`;
  // Raw (both): compare-and-set on the row's status (`from`); the release is guarded by the same state, read before the change.
  const [, rejected] = await batchRows<[unknown, { storage_key: string }]>(svc.db, [
    sql`UPDATE users SET upload_file_count = max(upload_file_count - 1, 0), upload_total_bytes = max(upload_total_bytes - (${item}), 0)
        WHERE id = (SELECT p.owner_id FROM ${table} m JOIN products p ON p.id = m.product_id WHERE m.id = ${mediaId}) AND EXISTS (${item})`,
    sql`UPDATE ${table} SET status = 'rejected', rejected_reason = ${reason}, updated_at = unixepoch()${kind === "images" ? sql`, thumbnails_ready = 0` : sql``}
        WHERE id = ${mediaId} AND status = ${from} RETURNING storage_key`,
  ]);
  return rejected[0]?.storage_key ?? null;
}
