import { sql } from "drizzle-orm";
import type { Services } from "../container";
import { batchRows } from "../db/client";
import type { MediaMessage } from "../services/media/messages";
import type { MediaKind } from "../services/media/storage";

/**
 * An upload still `pending` this long after its scan was last queued has lost its message (a
 * crash between the row's insert and the queue send, or a message the queue dropped): ten
 * minutes, well past a scan's normal life (seconds) and its retries (a few minutes with the
 * external scanner's time-out), so a message that is merely slow is rarely doubled.
 */
export const REQUEUE_AFTER_SECONDS = 10 * 60;

/**
 * Uploads re-queued per kind per run, oldest first; the rest wait for the next run. With the
 * Cron Trigger every five minutes that is 1,200 an hour of each kind, far beyond what crashes
 * leave, while one run stays one D1 round trip and two `sendBatch` calls.
 */
export const REQUEUE_BATCH = 100;

/** The ids re-queued, by kind. */
export type Requeued = Record<MediaKind, string[]>;

/**
 * Queues `media.scan` again for every upload left `pending` since `now - REQUEUE_AFTER_SECONDS`
 * or earlier (at most `limit` of each kind, oldest first), so that every acknowledged upload ends
 * `clean` or `rejected`. Each row is claimed by moving its `updated_at` (while pending, when its
 * scan was last queued) to `now` with a conditional write, in one batch for both kinds: a row is
 * queued again at most once per interval, and the partial index `<kind>_pending_idx` keeps the
 * search to the pending rows. The scan job is idempotent, so a message that was only late does no
 * harm. Should the queue refuse, the claimed rows come round again after another interval.
 */
export async function requeueStrandedMedia(
  svc: Pick<Services, "db" | "bindings" | "log">,
  now: number,
  limit = REQUEUE_BATCH,
): Promise<Requeued> {
  const { log } = svc;
  const cutoff = now - REQUEUE_AFTER_SECONDS;
  // Raw: a claim bounded by its own LIMIT sub-select, and only of rows still pending.
  const claim = (kind: MediaKind) => {
    const table = sql.raw(kind);
    return sql`UPDATE ${table} SET updated_at = ${now}
      WHERE id IN (SELECT id FROM ${table} WHERE status = 'pending' AND updated_at <= ${cutoff} ORDER BY updated_at LIMIT ${limit})
        AND status = 'pending'
      RETURNING id`;
  };
  const [images, files] = await batchRows<[{ id: string }, { id: string }]>(svc.db, [claim("images"), claim("files")]);
  const requeued: Requeued = { images: images.map((row) => row.id), files: files.map((row) => row.id) };
  const messages = (["images", "files"] as const).flatMap((kind) =>
    requeued[kind].map((id) => ({ body: { type: "media.scan", kind, id } satisfies MediaMessage })),
  );
  for (let i = 0; i < messages.length; i += 100) {
    try {
      await svc.bindings.MEDIA_QUEUE.sendBatch(messages.slice(i, i + 100));
    } catch (error) {
      log.error("stranded uploads could not be queued again", { error, messages: messages.length });
      throw error;
    }
  }
  if (messages.length > 0) log.warn("stranded uploads queued again", { images: requeued.images.length, files: requeued.files.length });
  return requeued;
}
