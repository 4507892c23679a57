import { appFor } from "./app";
import { createLogger } from "./lib/logger";
import { INSTALLED_PLUGINS } from "./plugins/installed";
import { handleMediaBatch } from "./queues/media";
import { requeueStrandedMedia } from "./queues/media-requeue";
import { buildServices } from "./services/build-services";

export { CameraRelay } from "../durable-objects/camera-relay";
export { RateLimiter } from "../durable-objects/rate-limiter";

/** `waitUntil` of the execution context, when there is one (tests may call a handler without). */
const deferTo = (ctx: ExecutionContext | undefined) => (ctx ? (work: Promise<unknown>) => ctx.waitUntil(work) : undefined);

export default {
  fetch: (request: Request, env: Env, ctx: ExecutionContext) => appFor(env).fetch(request, env, ctx),

  /** One container per batch; the media queue and its dead letters. */
  async queue(batch: MessageBatch, env: Env, ctx?: ExecutionContext) {
    const log = createLogger({ queue: batch.queue });
    const svc = buildServices(env, { log, defer: deferTo(ctx), plugins: INSTALLED_PLUGINS });
    await handleMediaBatch(batch, svc);
  },

  /** The Cron Trigger (wrangler.toml, every five minutes): stranded uploads are queued again, as of the scheduled time. */
  async scheduled(controller: ScheduledController, env: Env, ctx?: ExecutionContext) {
    const log = createLogger({ cron: controller.cron, scheduled_time: new Date(controller.scheduledTime).toISOString() });
    const svc = buildServices(env, { log, defer: deferTo(ctx), plugins: INSTALLED_PLUGINS });
    await requeueStrandedMedia(svc, Math.floor(controller.scheduledTime / 1000));
  },
} satisfies ExportedHandler<Env>;
