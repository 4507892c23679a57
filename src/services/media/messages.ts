import type { Services } from "../../container";
import type { MediaKind } from "./storage";

/**
 * The messages of `MEDIA_QUEUE`. Each names its job in `type` and the media it concerns by id,
 * so a message delivered twice does the same work twice at most, never something else.
 */
export type MediaMessage =
  /** Scan an upload waiting in quarantine; publish it when clean, delete it when not. */
  | { type: "media.scan"; kind: MediaKind; id: string }
  /** Make the thumbnails of a clean image. */
  | { type: "media.thumbnails"; id: string }
  /** Delete the objects of these storage keys that no row names any more (after records were deleted). */
  | { type: "media.purge"; kind: MediaKind; keys: string[] };

/** Storage keys per purge message, well under the queue's 128 KB message size. */
export const PURGE_KEYS_PER_MESSAGE = 500;

/** The purge messages for storage keys of each kind, at most `PURGE_KEYS_PER_MESSAGE` keys each. */
export function purgeMessages(keys: Record<MediaKind, readonly string[]>): MediaMessage[] {
  const messages: MediaMessage[] = [];
  for (const kind of ["images", "files"] as const) {
    for (let i = 0; i < keys[kind].length; i += PURGE_KEYS_PER_MESSAGE) {
      messages.push({ type: "media.purge", kind, keys: keys[kind].slice(i, i + PURGE_KEYS_PER_MESSAGE) });
    }
  }
  return messages;
}

/**
 * Queues the purge of the objects of deleted media. The rows are already gone: should the queue
 * refuse, the objects stay unreferenced (never listed or linked) and the log says so.
 */
export async function queuePurge(svc: Pick<Services, "bindings" | "log">, keys: Record<MediaKind, readonly string[]>): Promise<void> {
  const messages = purgeMessages(keys);
  for (let i = 0; i < messages.length; i += 100) {
    await svc.bindings.MEDIA_QUEUE.sendBatch(messages.slice(i, i + 100).map((body) => ({ body }))).catch((error: unknown) =>
      svc.log.error("media purge could not be queued", { error, messages: messages.length }),
    );
  }
}
