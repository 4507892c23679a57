import type { Services } from "../container";
import type { MediaMessage } from "../services/media/messages";
import { withLog } from "../services/platform/build-services";
import { DEAD_LETTER_QUEUE, handleDeadLetter } from "./media-dead-letters";
import { purgeJob, scanJob } from "./media-scan-job";
import { thumbnailJob } from "./media-thumbnail-job";

type MediaJob<T extends MediaMessage["type"]> = (svc: Services, message: Extract<MediaMessage, { type: T }>) => Promise<void>;

/** Jobs by message type. */
const JOBS: { [T in MediaMessage["type"]]: MediaJob<T> } = {
  "media.scan": scanJob,
  "media.thumbnails": thumbnailJob,
  "media.purge": purgeJob,
};

/**
 * Consumer of `MEDIA_QUEUE`. A message is acknowledged when its job succeeds and retried when
 * it fails or names no known job; after `max_retries` the queue moves it to the dead-letter
 * queue (`relab-media-dlq`), whose messages this consumer also receives and settles
 * (`handleDeadLetter`). `batchServices` is the batch's container; each message gets its own log.
 */
export async function handleMediaBatch(batch: MessageBatch<unknown>, batchServices: Services): Promise<void> {
  for (const message of batch.messages) {
    const log = batchServices.log.child({ queue: batch.queue, message_id: message.id, attempt: message.attempts });
    const svc = withLog(batchServices, log);
    if (batch.queue === DEAD_LETTER_QUEUE) {
      try {
        await handleDeadLetter(svc, message.body);
        message.ack();
      } catch (error) {
        log.error("dead letter handling failed", { error });
        message.retry();
      }
      continue;
    }
    const body = message.body as Partial<MediaMessage> | null;
    const type = typeof body?.type === "string" ? body.type : undefined;
    const job = type && Object.hasOwn(JOBS, type) ? (JOBS[type as MediaMessage["type"]] as MediaJob<MediaMessage["type"]>) : undefined;
    if (!job) {
      log.error("media message names no known job", { type: type ?? null });
      message.retry();
      continue;
    }
    try {
      await job(svc, body as MediaMessage);
      message.ack();
    } catch (error) {
      log.error("media job failed", { type, error });
      message.retry();
    }
  }
}
