import type { AppBindings } from "../env";
import { createLogger, type Logger } from "../lib/logger";

/** Every message on the media queue names its job in `type`. */
export interface MediaMessage {
  type: string;
  [field: string]: unknown;
}

type MediaJob = (message: MediaMessage, env: AppBindings, log: Logger) => Promise<void>;

/** Jobs by message type. Image thumbnails and scanning register here when media lands. */
const JOBS: Record<string, MediaJob> = {};

/**
 * Consumer of `MEDIA_QUEUE`. A message is acknowledged when its job succeeds and retried when
 * it fails or names no known job; after `max_retries` the queue moves it to the dead-letter
 * queue (`relab-media-dlq`), where it stays for inspection.
 */
export async function handleMediaBatch(batch: MessageBatch<unknown>, env: AppBindings): Promise<void> {
  for (const message of batch.messages) {
    const log = createLogger({ queue: batch.queue, message_id: message.id, attempt: message.attempts });
    const body = message.body as Partial<MediaMessage> | null;
    const type = typeof body?.type === "string" ? body.type : undefined;
    const job = type ? JOBS[type] : undefined;
    if (!job) {
      log.error("media message names no known job", { type: type ?? null });
      message.retry();
      continue;
    }
    try {
      await job(body as MediaMessage, env, log);
      message.ack();
    } catch (error) {
      log.error("media job failed", { type, error });
      message.retry();
    }
  }
}
