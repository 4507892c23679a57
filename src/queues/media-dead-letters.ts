import type { Services } from "../container";
import { rejectMedia } from "../services/media/media";
import type { MediaMessage } from "../services/media/messages";
import { quarantineKey } from "../services/media/storage";

/** The queue failed messages end in, after `max_retries` (wrangler.jsonc). */
export const DEAD_LETTER_QUEUE = "relab-media-dlq";

/**
 * The last word on a message that kept failing. A scan that never finished fails closed: the
 * upload was never published, and it is now `rejected` as `unscanned` (quota released, bytes
 * removed, its owner told) rather than left pending for ever. Thumbnails and purges are only
 * reported: the image stays served with its own URL as thumbnail, and unreferenced objects stay
 * until an operator removes them.
 */
export async function handleDeadLetter(svc: Services, body: unknown): Promise<void> {
  const { log } = svc;
  const message = body as Partial<MediaMessage> | null;
  log.error("media message dead-lettered", { type: typeof message?.type === "string" ? message.type : null });
  if (message?.type !== "media.scan" || typeof message.id !== "string" || (message.kind !== "images" && message.kind !== "files")) return;
  const rejected = await rejectMedia(svc, message.kind, message.id, "unscanned", "pending");
  await svc.bindings.UPLOADS.delete(quarantineKey(message.kind, message.id));
  log.error("unscanned upload rejected", { media: message.kind, media_id: message.id, row_rejected: rejected !== null });
}
