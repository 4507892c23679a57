import type { Services } from "../container";
import { runBackupSlice } from "../services/operations/backup";
import { isMaintenanceMessage, type MaintenanceMessage } from "../services/operations/maintenance-messages";
import { withLog } from "../services/platform/build-services";

/**
 * Consumer of `MAINTENANCE_QUEUE`: each message runs one slice of a backup for up to
 * `BACKUP_SLICE_MS`, as the release queue runs build slices (src/queues/releases.ts): a slice that
 * ran out of time saved a checkpoint and the next slice is a new message; a failed one is retried
 * by the queue from the last checkpoint; one that found the lease held comes back when it would
 * have run out. Messages of ended runs, or malformed ones, are acknowledged and dropped.
 */
export async function handleMaintenanceBatch(batch: MessageBatch<unknown>, batchServices: Services): Promise<void> {
  for (const message of batch.messages) {
    const svc = withLog(batchServices, batchServices.log.child({ queue: batch.queue, message_id: message.id, attempt: message.attempts }));
    if (!isMaintenanceMessage(message.body)) {
      svc.log.error("maintenance message is malformed", {
        type: typeof message.body === "object" ? ((message.body as { type?: unknown } | null)?.type ?? null) : null,
      });
      message.ack();
      continue;
    }
    const body = message.body;
    const outcome = await runBackupSlice(svc, body.id, Date.now() + svc.config.backup.sliceMs);
    switch (outcome.kind) {
      case "continue":
        try {
          await svc.bindings.MAINTENANCE_QUEUE.send(body satisfies MaintenanceMessage, { contentType: "json" });
          message.ack();
        } catch (error) {
          svc.log.error("the next backup slice could not be queued", { backup: body.id, error });
          message.retry();
        }
        break;
      case "busy":
        message.retry({ delaySeconds: Math.min(outcome.retryAfterSeconds, 600) });
        break;
      case "retry":
        message.retry();
        break;
      default:
        message.ack();
    }
  }
}
