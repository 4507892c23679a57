import type { DomainEvent, Services } from "../container";
import type { Plugin } from "../plugin";
import { withLog } from "../services/platform/build-services";

/** The queue of domain events (wrangler.jsonc, `EVENTS_QUEUE`). */
export const EVENTS_QUEUE = "relab-events";

/** The event a message carries, or null when it is none the core publishes. */
function parseEvent(body: unknown): DomainEvent | null {
  const event = body as Partial<Record<string, unknown>> | null;
  if (event?.type === "records.deleted" && Array.isArray(event.ids) && event.ids.every((id) => Number.isSafeInteger(id))) {
    return { type: "records.deleted", ids: event.ids as number[] };
  }
  if (event?.type === "account.deleted" && Number.isSafeInteger(event.userId))
    return { type: "account.deleted", userId: event.userId as number };
  return null;
}

/**
 * Consumer of `EVENTS_QUEUE`: hands each event to every enabled plugin that listens (`onEvent`),
 * one after the other. A message is acknowledged when every listener succeeded and retried when
 * one failed (all listen again: they must not mind doing their part twice); after `max_retries`
 * it is dropped, and the plugins' scheduled reconciliation does what is left. A message that is
 * no event is logged and dropped: retrying it could not help.
 */
export async function handleEventBatch(batch: MessageBatch<unknown>, batchServices: Services, plugins: readonly Plugin[]): Promise<void> {
  for (const message of batch.messages) {
    const svc = withLog(batchServices, batchServices.log.child({ queue: batch.queue, message_id: message.id, attempt: message.attempts }));
    const event = parseEvent(message.body);
    if (!event) {
      svc.log.error("queue message is no domain event", {
        type: typeof (message.body as { type?: unknown })?.type === "string" ? (message.body as { type: string }).type : null,
      });
      message.ack();
      continue;
    }
    let failed = false;
    for (const plugin of plugins) {
      if (!plugin.onEvent) continue;
      try {
        await plugin.onEvent(svc, event);
      } catch (error) {
        failed = true;
        svc.log.error("plugin event handler failed", { plugin: plugin.name, type: event.type, error });
      }
    }
    if (failed) message.retry();
    else message.ack();
  }
}
