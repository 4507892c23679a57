import { and, eq } from "drizzle-orm";
import type { Services } from "../container";
import { columnsOf } from "../db/rows";
import { images } from "../db/schema";
import { rejectMedia } from "../services/media/media";
import type { MediaMessage } from "../services/media/messages";
import { thumbnailKey } from "../services/media/records";
import { deleteUnreferencedObjects, IMMUTABLE_CACHE, servedKey } from "../services/media/storage";
import { decodeImage } from "./media-scan-job";

/**
 * `media.thumbnails`: makes the thumbnails of an image that is already `clean` but has none. The
 * scan job now makes them itself before an image turns clean; this job remains for images
 * published before it did (and messages queued then). It decodes the image in full as the scan
 * job does: an image that does not decode is rejected (unpublished, quota released), never
 * retried. A redelivered message finds the thumbnails ready, or the row settled, and stops; a
 * missing object throws, so the message is retried and dead-lettered.
 */
export async function thumbnailJob(svc: Services, message: Extract<MediaMessage, { type: "media.thumbnails" }>): Promise<void> {
  const { db, log } = svc;
  const bucket = svc.bindings.UPLOADS;
  const rows = await db.all<{ storage_key: string; status: string; thumbnails_ready: number }>(
    db
      .select(columnsOf(images, ["storage_key", "status", "thumbnails_ready"]))
      .from(images)
      .where(eq(images.id, message.id)),
  );
  const row = rows[0];
  if (!row || row.status !== "clean" || row.thumbnails_ready) return;
  const object = await bucket.get(servedKey("images", row.storage_key));
  if (!object) throw new Error("the published image is missing from storage");
  const decoded = await decodeImage(new Uint8Array(await object.arrayBuffer()));
  if (!decoded.ok) {
    const key = await rejectMedia(svc, "images", message.id, "undecodable", "clean");
    if (key) await deleteUnreferencedObjects(svc, "images", [key]);
    log.warn("published image rejected: it cannot be decoded", { media_id: message.id, reason: decoded.reason });
    return;
  }
  for (const thumbnail of decoded.thumbnails) {
    await bucket.put(servedKey("images", thumbnailKey(row.storage_key, thumbnail.width)), thumbnail.bytes, {
      httpMetadata: { contentType: thumbnail.contentType, cacheControl: IMMUTABLE_CACHE },
    });
  }
  if (decoded.thumbnails.length > 0) {
    await db.run(
      db
        .update(images)
        .set({ thumbnails_ready: true })
        .where(and(eq(images.storage_key, row.storage_key), eq(images.status, "clean"))),
    );
  }
  log.info("thumbnails made", { media_id: message.id, widths: decoded.thumbnails.map((t) => t.width) });
}
