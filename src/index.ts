import { app } from "./app";
import type { AppBindings } from "./env";
import { handleMediaBatch } from "./queues/media";

export { CameraRelay } from "../durable-objects/camera-relay";
export { RateLimiter } from "../durable-objects/rate-limiter";

export default {
  fetch: app.fetch,
  queue: handleMediaBatch,
} satisfies ExportedHandler<AppBindings>;
