import type { Services } from "../../container";
import { randomHexId } from "../../lib/ids";
import { ApiError } from "../../lib/problem";
import { deleteMedia, insertMedia, type MediaParent, type MediaRow } from "./media";
import type { MediaMessage } from "./messages";
import { type MediaKind, ORIENTATION_METADATA, quarantineKey } from "./storage";
import type { PreparedUpload } from "./upload";

/**
 * Stores a prepared (validated, sanitised) upload: the bytes wait in quarantine, never served,
 * with the EXIF orientation still to apply (`ORIENTATION_METADATA`), until the media job settles it; the row goes in `pending` and is charged to the record owner's
 * quota (`insertMedia`); then the scan is queued. A refused write removes the quarantined bytes,
 * and a scan that cannot be queued takes the whole upload back (503), so nothing is half-written.
 * Should the process die between the insert and the send, the Cron Trigger queues the scan again
 * (src/queues/media-requeue.ts).
 * Shared by the upload routes and the camera's device upload.
 */
export async function storeUpload<K extends MediaKind>(
  svc: Pick<Services, "db" | "bindings" | "log">,
  parent: MediaParent,
  media: K,
  prepared: PreparedUpload,
  uploadedBy: number,
): Promise<MediaRow<K>> {
  const mediaId = randomHexId();
  const key = quarantineKey(media, mediaId);
  const orientation = prepared.image?.orientation ?? 1;
  await svc.bindings.UPLOADS.put(key, prepared.bytes, {
    httpMetadata: { contentType: prepared.contentType },
    ...(orientation === 1 ? {} : { customMetadata: { [ORIENTATION_METADATA]: String(orientation) } }),
  });
  let row: MediaRow<K>;
  try {
    row = await insertMedia(svc, parent, media, {
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
    await svc.bindings.UPLOADS.delete(key);
    throw error;
  }
  try {
    await svc.bindings.MEDIA_QUEUE.send({ type: "media.scan", kind: media, id: mediaId } satisfies MediaMessage);
  } catch (error) {
    // Without its scan the upload would stay pending for ever: take it back.
    svc.log.error("media scan could not be queued", { error, media_id: mediaId });
    await deleteMedia(svc, parent, media, mediaId);
    await svc.bindings.UPLOADS.delete(key);
    throw new ApiError(503, { code: "MEDIA_QUEUE_UNAVAILABLE", detail: "The upload could not be queued for its malware scan; try again." });
  }
  svc.log.info("media uploaded", { media, media_id: mediaId, record_id: parent.id, size_bytes: prepared.bytes.length });
  return row;
}
