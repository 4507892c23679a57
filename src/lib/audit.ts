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
  | "rate_limit.exceeded";

/**
 * Writes one structured audit line (`"msg":"audit","event":...`). Callers pass ids, masked
 * addresses and reasons, never secrets; the logger's redaction still applies as a second guard.
 */
export function audit(log: Logger, event: AuditEvent, fields: LogFields = {}): void {
  log.info("audit", { event, ...fields });
}
