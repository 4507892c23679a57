import { app } from "./app";
import type { AppBindings } from "./env";
import { handleMediaBatch } from "./queues/media";
import { handleScheduled } from "./queues/media-requeue";
import { handleReleaseBatch, RELEASE_QUEUE } from "./queues/releases";

export { CameraRelay } from "../durable-objects/camera-relay";
export { RateLimiter } from "../durable-objects/rate-limiter";

export default {
  fetch: app.fetch,
  queue: (batch, env) => (batch.queue === RELEASE_QUEUE ? handleReleaseBatch(batch, env) : handleMediaBatch(batch, env)),
  scheduled: handleScheduled,
} satisfies ExportedHandler<AppBindings>;
