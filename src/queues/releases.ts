import type { Services } from "../container";
import { withLog } from "../services/platform/build-services";
import { clearPublishedStaging, runBuildSlice } from "../services/releases/build";
import { queueDoiRegistration, registerReleaseDoi, startDoiRegistration } from "../services/releases/doi";
import { isReleaseMessage, type ReleaseMessage } from "../services/releases/messages";

/**
 * Consumer of `RELEASE_QUEUE`. Each message runs one slice of a build for up to
 * `RELEASE_BUILD_SLICE_MS`; a slice that ran out of time saved a checkpoint, and the next slice is
 * a new message (not a retry, so a long build never uses up the message's retries). A slice that
 * failed is retried by the queue from the last checkpoint; one that found the build's lease held
 * (a duplicate message while a slice runs) comes back when the lease would have run out. Messages
 * of replaced attempts, of ended builds, or malformed ones are acknowledged and dropped. The slice
 * that publishes a build queues a `release.cleanup` message, which empties its staging tables,
 * and, with DataCite configured, a `release.doi` message: one attempt at registering its DOIs,
 * whose failures that may pass come back as a new, delayed message (src/services/releases/doi.ts).
 * `batchServices` is the batch's container; each message gets its own log.
 */
export async function handleReleaseBatch(batch: MessageBatch<unknown>, batchServices: Services): Promise<void> {
  for (const message of batch.messages) {
    const svc = withLog(batchServices, batchServices.log.child({ queue: batch.queue, message_id: message.id, attempt: message.attempts }));
    if (!isReleaseMessage(message.body)) {
      svc.log.error("release message is malformed", {
        type: typeof message.body === "object" ? ((message.body as { type?: unknown } | null)?.type ?? null) : null,
      });
      message.ack();
      continue;
    }
    if (message.body.type === "release.doi") {
      const { version } = message.body;
      const outcome = await registerReleaseDoi(svc, version);
      if (outcome.kind === "done") {
        message.ack();
        continue;
      }
      const delaySeconds = outcome.kind === "retry" ? outcome.delaySeconds : Math.min(outcome.retryAfterSeconds, 600);
      try {
        // A new message rather than a retry: the queue's retry budget is the builds', and the attempts are counted on the row.
        await queueDoiRegistration(svc, version, delaySeconds);
        message.ack();
      } catch (error) {
        svc.log.error("the next DOI registration attempt could not be queued", { release: version, error });
        message.retry({ delaySeconds });
      }
      continue;
    }
    const { version, build_id: buildId } = message.body;
    if (message.body.type === "release.cleanup") {
      try {
        // What is left past the invocation's query budget goes to the same message again.
        if (!(await clearPublishedStaging(svc, { version, buildId })))
          await svc.bindings.RELEASE_QUEUE.send(message.body satisfies ReleaseMessage, { contentType: "json" });
        message.ack();
      } catch (error) {
        // Retried by the queue; should every retry fail, the next snapshot removes the rows.
        svc.log.warn("release staging rows could not be removed; the next snapshot removes them", { release: version, error });
        message.retry();
      }
      continue;
    }
    const outcome = await runBuildSlice(svc, { version, buildId }, { deadline: Date.now() + svc.config.releaseBuildSliceMs });
    switch (outcome.kind) {
      case "continue":
        try {
          await svc.bindings.RELEASE_QUEUE.send(message.body satisfies ReleaseMessage, { contentType: "json" });
          message.ack();
        } catch (error) {
          // The checkpoint is saved: the retry of this message is the next slice.
          svc.log.error("the next release build slice could not be queued", { release: version, error });
          message.retry();
        }
        break;
      case "published":
        // The clean-up is a message of its own, so that nothing runs after the publication in this
        // invocation. Unsent, the rows stay until the next build's snapshot removes them.
        try {
          await svc.bindings.RELEASE_QUEUE.send({ type: "release.cleanup", version, build_id: buildId } satisfies ReleaseMessage, {
            contentType: "json",
          });
        } catch (error) {
          svc.log.warn("the release staging clean-up could not be queued; the next snapshot removes the rows", { release: version, error });
        }
        // Never undoes or holds up the publication: a registration that cannot be queued ends failed, for a superuser to retry.
        if (outcome.registerDoi) await startDoiRegistration(svc, version);
        message.ack();
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
