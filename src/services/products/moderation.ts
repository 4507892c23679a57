import { isModeration, type OwnedRecord } from "../../auth/permissions";
import type { SessionUser } from "../../auth/session-user";
import { audit } from "../../lib/audit";
import type { Logger } from "../../lib/logger";

export type ModerationAction =
  | "moderation.record.updated"
  | "moderation.record.deleted"
  | "moderation.bom.changed"
  | "moderation.media.deleted";

/**
 * Writes the audit record of a superuser's write to someone else's record (spec, Roles and
 * permissions: every moderation action is audited); does nothing for an owner's own write.
 */
export function auditModeration(
  log: Logger,
  actor: SessionUser,
  record: OwnedRecord,
  action: ModerationAction,
  target: { kind: "product" | "component"; id: number },
): void {
  if (!isModeration(actor, record)) return;
  audit(log, action, { actor_id: actor.id, owner_id: record.ownerId, record_kind: target.kind, record_id: target.id });
}
