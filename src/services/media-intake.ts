import type { Db } from "../db/client";
import { randomHexId } from "../lib/ids";
import type { Logger } from "../lib/logger";
import { ApiError } from "../lib/problem";
import type { MediaMessage } from "../queues/media-messages";
import { deleteMedia, insertMedia, type MediaParent, type MediaRow } from "./media";
import { type MediaKind, quarantineKey } from "./media-storage";
import type { PreparedUpload } from "./media-upload";

/** What storing an upload needs. */
export interface IntakeDeps {
  db: Db;
  bucket: R2Bucket;
  queue: Queue;
  log: Logger;
}

/**
 * Stores a prepared (validated, sanitised) upload: the bytes wait in quarantine, never served,
 * until the media job settles it; the row goes in `pending` and is charged to the record owner's
 * quota (`insertMedia`); then the scan is queued. A refused write removes the quarantined bytes,
 * and a scan that cannot be queued takes the whole upload back (503), so nothing is half-written.
 * Should the process die between the insert and the send, the Cron Trigger queues the scan again
 * (src/queues/media-requeue.ts).
 * Shared by the upload routes and the camera's device upload.
 */
export async function storeUpload<K extends MediaKind>(
  deps: IntakeDeps,
  parent: MediaParent,
  media: K,
  prepared: PreparedUpload,
  uploadedBy: number,
): Promise<MediaRow<K>> {
  const mediaId = randomHexId();
  const key = quarantineKey(media, mediaId);
  await deps.bucket.put(key, prepared.bytes, { httpMetadata: { contentType: prepared.contentType } });
  let row: MediaRow<K>;
  try {
    row = await insertMedia(deps.db, parent, media, {
      id: mediaId,
      storageKey: prepared.storageKey,
      filename: prepared.filename,
      contentType: prepared.contentType,
      sizeBytes: prepared.bytes.length,
      description: prepared.description,
      uploadedBy,
      image: prepared.image,
    });
  } catch (error) {
    await deps.bucket.delete(key);
    throw error;
  }
  try {
    await deps.queue.send({ type: "media.scan", kind: media, id: mediaId } satisfies MediaMessage);
  } catch (error) {
    // Without its scan the upload would stay pending for ever: take it back.
    deps.log.error("media scan could not be queued", { error, media_id: mediaId });
    await deleteMedia(deps.db, parent, media, mediaId);
    await deps.bucket.delete(key);
    throw new ApiError(503, { code: "MEDIA_QUEUE_UNAVAILABLE", detail: "The upload could not be queued for its malware scan; try again." });
  }
  deps.log.info("media uploaded", { media, media_id: mediaId, record_id: parent.id, size_bytes: prepared.bytes.length });
  return row;
}
