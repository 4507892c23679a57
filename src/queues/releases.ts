import { loadConfig } from "../config";
import { createDb } from "../db/client";
import type { AppBindings } from "../env";
import { createLogger } from "../lib/logger";
import { runBuildSlice } from "../services/release-build";

/** The queue of release builds (wrangler.toml): one message is one slice of one build. */
export const RELEASE_QUEUE = "relab-releases";

/** The one message of `RELEASE_QUEUE`: work on this attempt of this release's build. */
export interface ReleaseMessage {
  type: "release.build";
  version: string;
  build_id: string;
}

function isReleaseMessage(body: unknown): body is ReleaseMessage {
  const message = body as Partial<ReleaseMessage> | null;
  return message?.type === "release.build" && typeof message.version === "string" && typeof message.build_id === "string";
}

/**
 * Consumer of `RELEASE_QUEUE`. Each message runs one slice of a build for up to
 * `RELEASE_BUILD_SLICE_MS`; a slice that ran out of time saved a checkpoint, and the next slice is
 * a new message (not a retry, so a long build never uses up the message's retries). A slice that
 * failed is retried by the queue from the last checkpoint; one that found the build's lease held
 * (a duplicate message while a slice runs) comes back when the lease would have run out. Messages
 * of replaced attempts, of ended builds, or malformed ones are acknowledged and dropped.
 */
export async function handleReleaseBatch(batch: MessageBatch<unknown>, env: AppBindings): Promise<void> {
  const config = loadConfig(env);
  const { db } = createDb(env.DB);
  for (const message of batch.messages) {
    const log = createLogger({ queue: batch.queue, message_id: message.id, attempt: message.attempts });
    if (!isReleaseMessage(message.body)) {
      log.error("release message is malformed", { type: typeof message.body === "object" ? ((message.body as { type?: unknown } | null)?.type ?? null) : null });
      message.ack();
      continue;
    }
    const { version, build_id: buildId } = message.body;
    const outcome = await runBuildSlice({ db, config, log, bindings: env }, { version, buildId }, { deadline: Date.now() + config.releaseBuildSliceMs });
    switch (outcome.kind) {
      case "continue":
        try {
          await env.RELEASE_QUEUE.send(message.body satisfies ReleaseMessage, { contentType: "json" });
          message.ack();
        } catch (error) {
          // The checkpoint is saved: the retry of this message is the next slice.
          log.error("the next release build slice could not be queued", { release: version, error });
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
