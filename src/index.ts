import { appFor } from "./app";
import { fastLane } from "./fast-lane";
import { createLogger } from "./lib/logger";
import { enabledPlugins } from "./plugin";
import { INSTALLED_PLUGINS } from "./plugins/installed";
import { handleDeletionBatch } from "./queues/deletions";
import { EVENTS_QUEUE, handleEventBatch } from "./queues/events";
import { handleMediaBatch } from "./queues/media";
import { requeueStrandedMedia } from "./queues/media-requeue";
import { handleReleaseBatch } from "./queues/releases";
import { DELETION_QUEUE, requeueStalledDeletions } from "./services/deletions/jobs";
import { buildServices } from "./services/platform/build-services";
import { RELEASE_QUEUE } from "./services/releases/messages";

export { CameraRelay } from "./plugins/rpi-cam/durable-objects/camera-relay";
// Every Durable Object class wrangler.jsonc binds is exported, whether or not its plugin is on.
export { RateLimiter } from "./rate-limits/object";

/** `waitUntil` of the execution context, when there is one (tests may call a handler without). */
const deferTo = (ctx: ExecutionContext | undefined) => (ctx ? (work: Promise<unknown>) => ctx.waitUntil(work) : undefined);

export default {
  /** The fast lane's answer (src/fast-lane.ts), else the app of the plugins this deployment enables (src/app.ts). */
  fetch: fastLane(INSTALLED_PLUGINS, (request, env, ctx) => appFor(env).fetch(request, env, ctx)),

  /**
   * One container per batch: domain events go to the enabled plugins; release-build slices to the
   * release consumer; deletion jobs to the deletion consumer; media jobs and their dead letters to
   * the media consumer.
   */
  async queue(batch: MessageBatch, env: Env, ctx?: ExecutionContext) {
    const svc = buildServices(env, { log: createLogger({ queue: batch.queue }), defer: deferTo(ctx), plugins: INSTALLED_PLUGINS });
    if (batch.queue === EVENTS_QUEUE) await handleEventBatch(batch, svc, enabledPlugins(INSTALLED_PLUGINS, env));
    else if (batch.queue === RELEASE_QUEUE) await handleReleaseBatch(batch, svc);
    else if (batch.queue === DELETION_QUEUE) await handleDeletionBatch(batch, svc);
    else await handleMediaBatch(batch, svc);
  },

  /**
   * The Cron Trigger (wrangler.jsonc, every five minutes), as of the scheduled time: stranded uploads
   * and deletion jobs that stopped moving are queued again, and each enabled plugin reconciles
   * (clean-up an event missed). Each part runs whatever the others do; the run fails with the first error.
   */
  async scheduled(controller: ScheduledController, env: Env, ctx?: ExecutionContext) {
    const log = createLogger({ cron: controller.cron, scheduled_time: new Date(controller.scheduledTime).toISOString() });
    const svc = buildServices(env, { log, defer: deferTo(ctx), plugins: INSTALLED_PLUGINS });
    const parts = [
      requeueStrandedMedia(svc, Math.floor(controller.scheduledTime / 1000)),
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
