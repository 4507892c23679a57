import { eq, sql } from "drizzle-orm";
import type { Services } from "../container";
import { batchRows } from "../db/client";
import { columnsOf, type RowOf } from "../db/rows";
import { files, images } from "../db/schema";
import { audit } from "../lib/audit";
import { ImageStructureError } from "../lib/images/exif";
import { sniffImageFormat } from "../lib/images/formats";
import { makeThumbnails, type Thumbnail } from "../lib/images/thumbnails";
import { rejectMedia } from "../services/media/media";
import type { MediaMessage } from "../services/media/messages";
import { uprightBytes } from "../services/media/orient";
import { THUMBNAIL_WIDTHS, thumbnailKey } from "../services/media/records";
import { builtInScan, externalScan, type ScanVerdict } from "../services/media/scan";
import {
  deleteUnreferencedObjects,
  IMMUTABLE_CACHE,
  type MediaKind,
  ORIENTATION_METADATA,
  quarantineKey,
  servedKey,
} from "../services/media/storage";

type QueuedRow = RowOf<typeof images | typeof files, "storage_key" | "content_type" | "status">;

async function readRow(svc: Pick<Services, "db">, kind: MediaKind, id: string): Promise<QueuedRow | undefined> {
  const table = kind === "images" ? images : files;
  const rows = await svc.db.all<QueuedRow>(
    svc.db
      .select(columnsOf(table, ["storage_key", "content_type", "status"]))
      .from(table)
      .where(eq(table.id, id)),
  );
  return rows[0];
}

/**
 * `media.scan`: settles an upload waiting in quarantine. It is scanned with the built-in
 * signatures and, when configured, the external scanner; an image is then turned upright (the
 * EXIF orientation its upload recorded), decoded in full and its thumbnails made from that decode.
 * Clean (and decodable): the thumbnails and the bytes are published under the content key the
 * upload fixed (`contentHash`), then the row turns `clean`. Infected, or an image that does
 * not decode: the row turns `rejected` (quota released) and the bytes go. Every step can run
 * again: a redelivered or re-queued message (src/queues/media-requeue.ts) finds the row settled
 * and only clears what is left, and both settling writes apply only to a `pending` row. A scanner
 * failure throws, so the message is retried and, in the end, dead-lettered, which rejects the
 * upload as `unscanned` (fail closed).
 */
export async function scanJob(svc: Services, message: Extract<MediaMessage, { type: "media.scan" }>): Promise<void> {
  const { kind, id } = message;
  const { db, log } = svc;
  const bucket = svc.bindings.UPLOADS;
  const row = await readRow(svc, kind, id);
  if (row?.status !== "pending") {
    await bucket.delete(quarantineKey(kind, id));
    if (!row) log.info("media scan skipped: the upload was deleted", { media: kind, media_id: id });
    return;
  }
  const quarantined = await bucket.head(quarantineKey(kind, id));
  if (!quarantined) {
    // The bytes are stored before the row, and removed only after the row is settled: a row still
    // pending here lost them (or another delivery settled it meanwhile, and this changes nothing).
    await rejectMedia(svc, kind, id, "unscanned", "pending");
    log.error("pending upload without its quarantined bytes rejected", { media: kind, media_id: id });
    return;
  }

  const verdict = await scan(svc, kind, id, quarantined.size);
  if (verdict.infected) {
    await rejectMedia(svc, kind, id, "malware", "pending");
    await bucket.delete(quarantineKey(kind, id));
    audit(log, "media.scan.infected", { media: kind, media_id: id, threat: verdict.signature, scanner: verdict.scanner });
    return;
  }

  const object = await bucket.get(quarantineKey(kind, id));
  if (!object) throw new Error("the quarantined bytes vanished during the scan");
  let body: ReadableStream | Uint8Array = object.body;
  let thumbnails: Thumbnail[] = [];
  if (kind === "images") {
    const upright = turnUpright(new Uint8Array(await object.arrayBuffer()), object.customMetadata?.[ORIENTATION_METADATA]);
    const decoded = upright.ok ? { ...(await decodeImage(upright.bytes)), bytes: upright.bytes } : upright;
    if (!decoded.ok) {
      await rejectMedia(svc, kind, id, "undecodable", "pending");
      await bucket.delete(quarantineKey(kind, id));
      log.warn("image rejected: it cannot be decoded", { media_id: id, reason: decoded.reason });
      return;
    }
    body = decoded.bytes;
    thumbnails = decoded.thumbnails;
  }

  // Objects first, the row last: a row never turns clean before what it names exists.
  for (const thumbnail of thumbnails) {
    await bucket.put(servedKey("images", thumbnailKey(row.storage_key, thumbnail.width)), thumbnail.bytes, {
      httpMetadata: { contentType: thumbnail.contentType, cacheControl: IMMUTABLE_CACHE },
    });
  }
  await bucket.put(servedKey(kind, row.storage_key), body, {
    httpMetadata: { contentType: row.content_type, cacheControl: IMMUTABLE_CACHE },
  });
  const published = await publish(svc, kind, id, body instanceof Uint8Array ? body.length : quarantined.size, thumbnails.length > 0);
  await bucket.delete(quarantineKey(kind, id));
  if (published.length === 0) {
    // Deleted (or settled by another delivery) meanwhile: what was just published may belong to nobody.
    await deleteUnreferencedObjects(svc, kind, [row.storage_key]);
    return;
  }
  log.info("media scan passed", { media: kind, media_id: id, thumbnails: thumbnails.length });
}

/**
 * Turns the row `clean`, only while it is `pending`, in one batch: an image turned upright by the
 * job is charged to its owner's quota with the size it is served at (the request charged the
 * size it received; turning a JPEG losslessly changes it by a few per cent). Returns the ids
 * published (none when the row was settled or deleted meanwhile).
 */
async function publish(
  svc: Pick<Services, "db">,
  kind: MediaKind,
  id: string,
  sizeBytes: number,
  thumbnailsReady: boolean,
): Promise<{ id: string }[]> {
  const table = sql.raw(kind);
  const ready = kind === "images" ? sql`, thumbnails_ready = ${thumbnailsReady ? 1 : 0}` : sql``;
  const charged = sql`SELECT size_bytes FROM ${table} WHERE id = ${id} AND status = 'pending'`;
  // Raw: both writes hold only while the row is still pending (compare-and-set), and the usage moves by the difference.
  const [, published] = await batchRows<[unknown, { id: string }]>(svc.db, [
    sql`UPDATE users SET upload_total_bytes = max(upload_total_bytes + ${sizeBytes} - (${charged}), 0)
        WHERE id = (SELECT p.owner_id FROM ${table} m JOIN products p ON p.id = m.product_id WHERE m.id = ${id})
          AND EXISTS (${charged}) AND (${charged}) <> ${sizeBytes}`,
    sql`UPDATE ${table} SET status = 'clean', size_bytes = ${sizeBytes}, updated_at = unixepoch()${ready}
        WHERE id = ${id} AND status = 'pending' RETURNING id`,
  ]);
  return published;
}

/**
 * The quarantined bytes of an image with the EXIF orientation its upload recorded applied
 * (`uprightBytes`: the pixel work the upload request leaves to this job). The bytes are in
 * memory, so a failure is the data's: the image is rejected as undecodable, never retried.
 */
export function turnUpright(
  bytes: Uint8Array,
  recorded: string | undefined,
): { ok: true; bytes: Uint8Array } | { ok: false; reason: string } {
  const orientation = recorded === undefined ? 1 : Number(recorded);
  const format = sniffImageFormat(bytes.subarray(0, 16));
  try {
    if (!Number.isInteger(orientation) || orientation < 1 || orientation > 8)
      throw new ImageStructureError(`orientation ${recorded} recorded`);
    if (!format) throw new ImageStructureError("not in an image format");
    return { ok: true, bytes: uprightBytes(bytes, format, orientation) };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? `orientation: ${error.name}: ${error.message}`.slice(0, 300) : String(error) };
  }
}

/**
 * Decodes an image in full and makes its thumbnails. The bytes are in memory, so a failure is the
 * data's (corrupt or truncated pixel data, sizes the data does not fill, a variant no decoder here
 * reads): retrying could not help, and the image is rejected rather than retried.
 */
export async function decodeImage(bytes: Uint8Array): Promise<{ ok: true; thumbnails: Thumbnail[] } | { ok: false; reason: string }> {
  const format = sniffImageFormat(bytes.subarray(0, 16));
  try {
    if (!format) throw new ImageStructureError("not in an image format");
    return { ok: true, thumbnails: await makeThumbnails(bytes, format, THUMBNAIL_WIDTHS) };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 300) : String(error) };
  }
}

/** The built-in scan, then the external one when configured; each reads the quarantined bytes as a stream. */
async function scan(svc: Services, kind: MediaKind, id: string, size: number): Promise<ScanVerdict> {
  const { config } = svc;
  const read = async () => {
    const object = await svc.bindings.UPLOADS.get(quarantineKey(kind, id));
    if (!object) throw new Error("the quarantined bytes vanished during the scan");
    return object.body;
  };
  const builtIn = await builtInScan(await read(), config.malwareScan);
  if (builtIn.infected || !config.malwareScan.external) return builtIn;
  return externalScan(svc, await read(), size, config.malwareScan.external);
}

/** `media.purge`: removes the objects of storage keys no row names any more (after records were deleted). */
export async function purgeJob(svc: Services, message: Extract<MediaMessage, { type: "media.purge" }>): Promise<void> {
  const removed = await deleteUnreferencedObjects(svc, message.kind, message.keys);
  svc.log.info("media purged", { media: message.kind, keys: message.keys.length, objects_deleted: removed });
}
