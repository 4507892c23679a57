import { type SQL, sql } from "drizzle-orm";
import { hashPassword, verifyPassword } from "../auth/password";
import { batchRows } from "../db/client";
import { assertAcceptablePassword } from "../auth/password-policy";
import { audit } from "../lib/audit";
import { canonicalEmail, normalizeEmail } from "../lib/email-address";
import { ApiError } from "../lib/problem";
import { emailChangedEmail, passwordChangedEmail } from "./account-emails";
import { assertNotDisposable, assertUsableUsername, sendVerification, uniqueViolation } from "./accounts";
import { type ServiceDeps, sendQuietly } from "./deps";
import { reserveWrongSecret } from "./failure-budgets";
import { revocationStatements, type SessionUser, toSessionUser, USER_COLUMNS, type UserRow } from "./sessions";

/** Seconds within which a sign-in counts as recent for a step-up without a password. */
export const RECENT_SIGN_IN_SECONDS = 10 * 60;

export interface ProfileChanges {
  username?: string;
  email?: string;
  password?: string;
  preferences?: { profile_visibility?: SessionUser["profileVisibility"] };
  current_password?: string;
  mfa_code?: string;
}

export interface ProfileUpdate {
  user: SessionUser;
  /** Every token of the account was revoked (an email or password change). */
  revoked: boolean;
}

/**
 * The step-up an email or password change needs: the current password (missing 400, wrong 403,
 * never 401, since the session itself is fine), or for an account without one a sign-in within
 * the last 10 minutes. A password check takes a unit of the account's wrong-secret budget first.
 */
async function assertStepUp(deps: ServiceDeps, user: SessionUser, currentPassword: string | undefined): Promise<void> {
  if (user.hashedPassword) {
    if (currentPassword === undefined) {
      throw new ApiError(400, {
        code: "CURRENT_PASSWORD_REQUIRED",
        detail: "Changing the email address or password needs `current_password`.",
      });
    }
    const reservation = await reserveWrongSecret(deps, user.id);
    if (!verifyPassword(currentPassword, user.hashedPassword)) {
      throw new ApiError(403, { code: "CURRENT_PASSWORD_INVALID", detail: "The current password is not correct." });
    }
    await reservation.refund();
    return;
  }
  const recent = user.lastLoginAt !== null && Date.now() / 1000 - user.lastLoginAt <= RECENT_SIGN_IN_SECONDS;
  if (!recent) {
    throw new ApiError(403, {
      code: "RECENT_SIGN_IN_REQUIRED",
      detail: "Sign in again (within the last 10 minutes) before changing the email address or password.",
    });
  }
}

/**
 * Applies a self-service update in one batch. An email or password change needs the step-up,
 * revokes every token of the account in the same batch, and sends the Events section's emails: a
 * verification link to a new address and a notice to the old one, a notice after a new password.
 */
export async function updateProfile(deps: ServiceDeps, user: SessionUser, changes: ProfileChanges): Promise<ProfileUpdate> {
  const email = changes.email === undefined ? undefined : normalizeEmail(changes.email);
  const emailChanged = email !== undefined && email !== user.email;
  const username = changes.username;
  const usernameChanged = username !== undefined && username !== user.username;
  const passwordChanged = changes.password !== undefined;

  if (usernameChanged) assertUsableUsername(username);
  if (changes.email !== undefined || passwordChanged) await assertStepUp(deps, user, changes.current_password);
  if (emailChanged) assertNotDisposable(email);
  if (passwordChanged) {
    await assertAcceptablePassword(deps.config, deps.log, changes.password!, {
      username: usernameChanged ? username : user.username,
      email: emailChanged ? email : user.email,
    });
  }

  const sets: SQL[] = [];
  if (usernameChanged) sets.push(sql`username = ${username}`);
  if (emailChanged) sets.push(sql`email = ${email}, email_canonical = ${canonicalEmail(email)}, is_verified = 0`);
  if (passwordChanged) sets.push(sql`hashed_password = ${hashPassword(changes.password!, deps.config.argon2)}`);
  const visibility = changes.preferences?.profile_visibility;
  if (visibility !== undefined && visibility !== user.profileVisibility) {
    sets.push(sql`profile_visibility = ${visibility}`);
  }
  if (sets.length === 0) return { user, revoked: false };

  const revoke = emailChanged || passwordChanged;
  const update = sql`UPDATE users SET ${sql.join(sets, sql`, `)}, updated_at = unixepoch()
    WHERE id = ${user.id} RETURNING ${USER_COLUMNS}`;
  let rows: UserRow[];
  // The unique indexes on email, its canonical form and username decide collisions (409).
  try {
    [rows] = revoke
      ? await batchRows<[UserRow, never, never]>(deps.db, [update, ...revocationStatements(user.id)])
      : await batchRows<[UserRow]>(deps.db, [update]);
  } catch (error) {
    throw uniqueViolation(error) ?? error;
  }
  const updated = toSessionUser(rows[0]!);

  if (emailChanged) {
    audit(deps.log, "auth.email.changed", { user_id: user.id });
    await sendVerification(deps, updated);
    await sendQuietly(deps, emailChangedEmail(user.email, updated.email));
  }
  if (passwordChanged) {
    audit(deps.log, "auth.password.changed", { user_id: user.id });
    await sendQuietly(deps, passwordChangedEmail(updated.email));
  }
  if (revoke) audit(deps.log, "auth.sessions.revoked", { user_id: user.id, reason: emailChanged ? "email_change" : "password_change" });
  return { user: updated, revoked: revoke };
}
