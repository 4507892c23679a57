import type { LogFields, Logger } from "./logger";

/** Audit events: the spec's list of security-relevant moments (Events, item 4). */
export type AuditEvent =
  | "auth.login.succeeded"
  | "auth.login.failed"
  | "auth.logout"
  | "auth.refresh.replayed"
  | "auth.sessions.revoked"
  | "auth.password.reset"
  | "auth.password.changed"
  | "auth.email.changed"
  | "auth.email.verified"
  | "auth.mfa.enabled"
  | "auth.mfa.disabled"
  | "auth.mfa.recovery_codes_regenerated"
  | "auth.mfa.challenge.succeeded"
  | "auth.mfa.challenge.failed"
  | "auth.step_up.failed"
  | "auth.oauth.linked"
  | "auth.oauth.unlinked"
  | "auth.oauth.account_created"
  | "auth.oauth.failed"
  | "account.deleted"
  | "account.contributor_terms.accepted"
  | "account.contributor_terms.withdrawn"
  | "admin.user.updated"
  | "admin.user.role_changed"
  | "admin.user.mfa_reset"
  | "admin.user.deleted"
  | "admin.cache.cleared"
  | "admin.release.created"
  | "admin.release.retried"
  | "admin.release.doi_retried"
  | "account.release_credit.changed"
  | "admin.reference.created"
  | "admin.reference.updated"
  | "admin.reference.deleted"
  | "moderation.record.updated"
  | "moderation.record.deleted"
  | "moderation.bom.changed"
  | "moderation.media.deleted"
  | "media.scan.infected"
  | "authorization.denied"
  | "rate_limit.exceeded";

/**
 * Writes one structured audit line (`"msg":"audit","event":...`). Callers pass ids, masked
 * addresses and reasons, never secrets; the logger's redaction still applies as a second guard.
 */
export function audit(log: Logger, event: AuditEvent, fields: LogFields = {}): void {
  log.info("audit", { event, ...fields });
}
