import { app } from "./app";
import type { AppBindings } from "./env";
import { handleMediaBatch } from "./queues/media";
import { handleScheduled } from "./queues/media-requeue";

export { CameraRelay } from "../durable-objects/camera-relay";
export { RateLimiter } from "../durable-objects/rate-limiter";

export default {
  fetch: app.fetch,
  queue: handleMediaBatch,
  scheduled: handleScheduled,
} satisfies ExportedHandler<AppBindings>;
