import { eq } from "drizzle-orm";
import { dummyPasswordHash, verifyPassword } from "../../auth/password";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { users } from "../../db/schema";
import { audit } from "../../lib/audit";
import { loginIdentifier } from "../../lib/email-address";
import { maskEmail } from "../../lib/logger";
import { ApiError } from "../../lib/problem";
import { reserveLoginFailure } from "../../rate-limits/failure-budgets";
import { startChallenge } from "./mfa-challenge";
import { type RefreshRefusal, rotateSession, type SessionGrant, startSession, toSessionUser, USER_FIELDS, type UserRow } from "./sessions";

export type LoginTransport = "bearer" | "cookie";

/** What a successful password check leads to: a session, or for a TOTP account a challenge to answer with a code. */
export type LoginOutcome =
  | { kind: "session"; user: SessionUser; grant: SessionGrant }
  | { kind: "challenge"; user: SessionUser; mfaToken: string };

/** The one answer to every failed login, whatever the reason: the bytes must not tell them apart. */
export function badCredentials(): ApiError {
  return new ApiError(400, {
    code: "LOGIN_BAD_CREDENTIALS",
    detail: "The email or username and password do not match an active account.",
  });
}

/** Looks an account up by email (any alias of its mailbox) or by username. */
export async function findUserByIdentifier(svc: Pick<Services, "db">, identifier: string): Promise<SessionUser | null> {
  const { kind, key } = loginIdentifier(identifier);
  const condition = kind === "email" ? eq(users.email_canonical, key) : eq(users.username, key);
  const rows = await svc.db.all<UserRow>(svc.db.select(USER_FIELDS).from(users).where(condition));
  return rows[0] ? toSessionUser(rows[0]) : null;
}

/**
 * Checks a password login. Unknown, wrong-password and inactive accounts all cost one Argon2id
 * verification (a dummy hash when there is no account) and end in the same `badCredentials()`.
 * Each attempt first takes a unit of the account's failed-login budget, given back on success.
 */
export async function passwordLogin(svc: Services, identifier: string, password: string, transport: LoginTransport): Promise<LoginOutcome> {
  // The budget does not depend on the account, so it is taken while the account is looked up.
  const [found, reserved] = await Promise.allSettled([findUserByIdentifier(svc, identifier), reserveLoginFailure(svc, identifier)]);
  if (reserved.status === "rejected") throw reserved.reason;
  const reservation = reserved.value;
  if (found.status === "rejected") {
    // A database failure is not a wrong password.
    await reservation.refund();
    throw found.reason;
  }
  const user = found.value;
  const matches = verifyPassword(password, user?.hashedPassword ?? dummyPasswordHash(svc.config.argon2));
  if (!user || !matches || !user.isActive) {
    audit(svc.log, "auth.login.failed", {
      transport,
      user_id: user?.id ?? null,
      // A typed identifier may be a password pasted into the wrong field: only masked emails are kept.
      account: identifier.includes("@") ? maskEmail(identifier.trim()) : null,
      reason: !user ? "unknown_account" : !matches ? "wrong_password" : "inactive",
    });
    throw badCredentials();
  }
  await reservation.refund();
  return completeLogin(svc, user, transport);
}

/**
 * Everything that happens once a user has proven who they are. The single place where a TOTP
 * account is diverted to a challenge (POST /v1/auth/mfa/challenge) instead of receiving a session.
 */
export async function completeLogin(svc: Services, user: SessionUser, transport: LoginTransport): Promise<LoginOutcome> {
  if (user.totpEnabled) {
    const mfaToken = await startChallenge(svc, user, transport);
    if (!mfaToken) {
      audit(svc.log, "auth.login.failed", { transport, user_id: user.id, account: null, reason: "changed_during_login" });
      throw badCredentials();
    }
    return { kind: "challenge", user, mfaToken };
  }
  const grant = await startSession(svc, svc.config.tokenSecret, user.id, user, { recordLogin: true });
  if (!grant) {
    // The account changed while the password was being checked: the check no longer stands.
    audit(svc.log, "auth.login.failed", { transport, user_id: user.id, account: null, reason: "changed_during_login" });
    throw badCredentials();
  }
  audit(svc.log, "auth.login.succeeded", { transport, user_id: user.id });
  return { kind: "session", user, grant };
}

/** 401 for a refresh token that is unknown, spent, expired or revoked. */
export function refreshTokenInvalid(headers?: Record<string, string[]>): ApiError {
  return new ApiError(401, {
    code: "REFRESH_TOKEN_INVALID",
    detail: "The refresh token is invalid, expired, already used or revoked; sign in again.",
    headers,
  });
}

/** Rotates a refresh token; a replay that ended its session is audited. */
export async function refreshSession(
  svc: Pick<Services, "db" | "config" | "log">,
  presented: string,
): Promise<{ grant: SessionGrant } | { refused: RefreshRefusal }> {
  const result = await rotateSession(svc, svc.config.tokenSecret, presented);
  if ("refused" in result && result.refused === "replayed") {
    audit(svc.log, "auth.refresh.replayed", { user_id: result.userId });
  }
  return result;
}
