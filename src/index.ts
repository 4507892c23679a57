import { appFor } from "./app";
import { createLogger } from "./lib/logger";
import { enabledPlugins } from "./plugin";
import { INSTALLED_PLUGINS } from "./plugins/installed";
import { handleDeletionBatch } from "./queues/deletions";
import { EVENTS_QUEUE, handleEventBatch } from "./queues/events";
import { handleMaintenanceBatch } from "./queues/maintenance";
import { handleMediaBatch } from "./queues/media";
import { requeueStrandedMedia } from "./queues/media-requeue";
import { handleReleaseBatch } from "./queues/releases";
import { DELETION_QUEUE, requeueStalledDeletions } from "./services/deletions/jobs";
import { startBackup } from "./services/operations/backup";
import { MAINTENANCE_QUEUE } from "./services/operations/maintenance-messages";
import { CORE_SEALED_COLUMNS, reencryptSealedValues } from "./services/operations/sealed-values";
import { buildServices } from "./services/platform/build-services";
import { RELEASE_QUEUE } from "./services/releases/messages";

/** How long one scheduled run may spend moving sealed values to a new data key (the next run goes on). */
const REENCRYPTION_BUDGET_MS = 10_000;

export { CameraRelay } from "./plugins/rpi-cam/durable-objects/camera-relay";
// Every Durable Object class wrangler.jsonc binds is exported, whether or not its plugin is on.
export { RateLimiter } from "./rate-limits/object";

/** `waitUntil` of the execution context, when there is one (tests may call a handler without). */
const deferTo = (ctx: ExecutionContext | undefined) => (ctx ? (work: Promise<unknown>) => ctx.waitUntil(work) : undefined);

export default {
  /** Every request goes through the one app of the plugins this deployment enables (src/app.ts). */
  fetch: (request: Request, env: Env, ctx: ExecutionContext) => appFor(env).fetch(request, env, ctx),

  /**
   * One container per batch: domain events go to the enabled plugins; release-build slices to the
   * release consumer; backup slices to the maintenance consumer; deletion jobs to the deletion
   * consumer; media jobs and their dead letters to the media consumer.
   */
  async queue(batch: MessageBatch, env: Env, ctx?: ExecutionContext) {
    const svc = buildServices(env, { log: createLogger({ queue: batch.queue }), defer: deferTo(ctx), plugins: INSTALLED_PLUGINS });
    if (batch.queue === EVENTS_QUEUE) await handleEventBatch(batch, svc, enabledPlugins(INSTALLED_PLUGINS, env));
    else if (batch.queue === RELEASE_QUEUE) await handleReleaseBatch(batch, svc);
    else if (batch.queue === MAINTENANCE_QUEUE) await handleMaintenanceBatch(batch, svc);
    else if (batch.queue === DELETION_QUEUE) await handleDeletionBatch(batch, svc);
    else await handleMediaBatch(batch, svc);
  },

  /**
   * The Cron Trigger (wrangler.jsonc, every five minutes), as of the scheduled time: stranded uploads
   * and deletion jobs that stopped moving are queued again, each enabled plugin reconciles
   * (clean-up an event missed), and values sealed with a data key that is no longer the current
   * one move to it (a rotation; docs/operations.md). Each part runs whatever the others do; the
   * run fails with the first error. The trigger named `BACKUP_CRON` (daily) starts a database
   * backup instead (src/services/operations/backup.ts).
   */
  async scheduled(controller: ScheduledController, env: Env, ctx?: ExecutionContext) {
    const log = createLogger({ cron: controller.cron, scheduled_time: new Date(controller.scheduledTime).toISOString() });
    const svc = buildServices(env, { log, defer: deferTo(ctx), plugins: INSTALLED_PLUGINS });
    if (controller.cron === svc.config.backup.cron) {
      await startBackup(svc, controller.scheduledTime);
      return;
    }
    const parts = [
      requeueStrandedMedia(svc, Math.floor(controller.scheduledTime / 1000)),
      reencryptSealedValues(
        svc,
        [...CORE_SEALED_COLUMNS, ...INSTALLED_PLUGINS.flatMap((plugin) => plugin.sealedColumns ?? [])],
        Date.now() + REENCRYPTION_BUDGET_MS,
      ),
      requeueStalledDeletions(svc, Math.floor(controller.scheduledTime / 1000)),
      ...enabledPlugins(INSTALLED_PLUGINS, env).map(async (plugin) => {
        try {
          await plugin.scheduled?.(svc, controller.scheduledTime);
        } catch (error) {
          log.error("plugin scheduled work failed", { plugin: plugin.name, error });
          throw error;
        }
      }),
    ];
    const failure = (await Promise.allSettled(parts)).find((outcome) => outcome.status === "rejected");
    if (failure) throw failure.reason;
  },
} satisfies ExportedHandler<Env>;
