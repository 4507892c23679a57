import type { Services } from "../container";
import { type DeletionMessage, isDeletionMessage, queueDeletionJob, runDeletionJob } from "../services/deletions/jobs";
import { withLog } from "../services/platform/build-services";

/**
 * Consumer of `DELETION_QUEUE`: each message works on one deletion job, slice after slice, for
 * `DELETION_RUN_MS`; a job with work left continues in a new message (not a retry, so a long job
 * never uses up the message's retries). A slice that fails changed nothing (each is one atomic
 * batch): the message is retried by the queue and goes on from the last slice that committed.
 * Malformed messages are logged and dropped.
 */
export async function handleDeletionBatch(batch: MessageBatch<unknown>, batchServices: Services): Promise<void> {
  for (const message of batch.messages) {
    const svc = withLog(batchServices, batchServices.log.child({ queue: batch.queue, message_id: message.id, attempt: message.attempts }));
    if (!isDeletionMessage(message.body)) {
      svc.log.error("deletion message is malformed", {
        type: typeof message.body === "object" ? ((message.body as { type?: unknown } | null)?.type ?? null) : null,
      });
      message.ack();
      continue;
    }
    const { job_id: jobId } = message.body satisfies DeletionMessage;
    let outcome: Awaited<ReturnType<typeof runDeletionJob>>;
    try {
      outcome = await runDeletionJob(svc, jobId, { deadline: Date.now() + svc.config.deletionRunMs });
    } catch (error) {
      svc.log.error("deletion slice failed; the queue retries it", { job_id: jobId, error });
      message.retry();
      continue;
    }
    if (outcome.kind === "continue" && !(await queueDeletionJob(svc, jobId))) {
      // Nothing lost: the retry of this message is the next slice.
      message.retry();
      continue;
    }
    message.ack();
  }
}
