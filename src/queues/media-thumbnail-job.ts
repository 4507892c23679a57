import { sql } from "drizzle-orm";
import { createDb } from "../db/client";
import type { AppBindings } from "../env";
import { sniffImageFormat } from "../lib/images/formats";
import { makeThumbnails } from "../lib/images/thumbnails";
import type { Logger } from "../lib/logger";
import { THUMBNAIL_WIDTHS, thumbnailKey } from "../services/media-records";
import { IMMUTABLE_CACHE, servedKey } from "../services/media-storage";
import type { MediaMessage } from "./media-messages";

/**
 * `media.thumbnails`: makes the thumbnails of a clean image at every width, stores them, then
 * marks every row with the same bytes ready. A redelivered message finds them ready and stops;
 * a missing object or an image no decoder can read throws, so the message is retried and ends
 * in the dead-letter queue, and `thumbnail_url` keeps pointing at the image.
 */
export async function thumbnailJob(message: Extract<MediaMessage, { type: "media.thumbnails" }>, env: AppBindings, log: Logger): Promise<void> {
  const { db } = createDb(env.DB);
  const rows = await db.all<{ storage_key: string; status: string; thumbnails_ready: number }>(
    sql`SELECT storage_key, status, thumbnails_ready FROM images WHERE id = ${message.id}`,
  );
  const row = rows[0];
  if (!row || row.status !== "clean" || row.thumbnails_ready) return;
  const object = await env.UPLOADS.get(servedKey("images", row.storage_key));
  if (!object) throw new Error("the published image is missing from storage");
  const bytes = new Uint8Array(await object.arrayBuffer());
  const format = sniffImageFormat(bytes.subarray(0, 16));
  if (!format) throw new Error("the published image is not in an image format");
  const thumbnails = await makeThumbnails(bytes, format, THUMBNAIL_WIDTHS);
  if (!thumbnails) {
    log.warn("thumbnails not made: no bounded decoder for this image", { media_id: message.id, format });
    return;
  }
  for (const thumbnail of thumbnails) {
    await env.UPLOADS.put(servedKey("images", thumbnailKey(row.storage_key, thumbnail.width)), thumbnail.bytes, {
      httpMetadata: { contentType: thumbnail.contentType, cacheControl: IMMUTABLE_CACHE },
    });
  }
  await db.run(sql`UPDATE images SET thumbnails_ready = 1 WHERE storage_key = ${row.storage_key} AND status = 'clean'`);
  log.info("thumbnails made", { media_id: message.id, widths: thumbnails.map((t) => t.width) });
}
