import { type SQL, sql } from "drizzle-orm";
import { hashPassword } from "../../auth/password";
import { assertAcceptablePassword } from "../../auth/password-policy";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { audit } from "../../lib/audit";
import { canonicalEmail, normalizeEmail } from "../../lib/email-address";
import { sendQuietly } from "../platform/email";
import { revocationStatements, toSessionUser, USER_COLUMNS, type UserRow } from "../sign-in/sessions";
import { assertStepUp } from "../sign-in/step-up";
import { assertAvailable, assertNotDisposable, assertUsableUsername, sendVerification, uniqueViolation } from "./accounts";
import { emailChangedEmail, passwordChangedEmail } from "./emails";

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
 * Applies a self-service update in one batch. An email or password change needs the step-up,
 * revokes every token of the account in the same batch, and sends the Events section's emails: a
 * verification link to a new address and a notice to the old one, a notice after a new password.
 */
export async function updateProfile(svc: Services, user: SessionUser, changes: ProfileChanges): Promise<ProfileUpdate> {
  const email = changes.email === undefined ? undefined : normalizeEmail(changes.email);
  const emailChanged = email !== undefined && email !== user.email;
  const username = changes.username;
  const usernameChanged = username !== undefined && username !== user.username;
  const passwordChanged = changes.password !== undefined;

  // Every check that needs no secret runs first: a refusal after the step-up would have spent
  // the user's code (a recovery code for good) on a request that changes nothing.
  if (usernameChanged) assertUsableUsername(username);
  if (emailChanged) assertNotDisposable(email);
  if (emailChanged) {
    await assertAvailable(svc, { email, username: usernameChanged ? username : undefined }, user.id);
  }
  if (passwordChanged) {
    await assertAcceptablePassword(svc.config, svc.log, changes.password!, {
      username: usernameChanged ? username : user.username,
      email: emailChanged ? email : user.email,
    });
  }
  if (changes.email !== undefined || passwordChanged) {
    await assertStepUp(
      svc,
      user,
      { currentPassword: changes.current_password, mfaCode: changes.mfa_code },
      { operation: "Changing the email address or password" },
    );
  }

  const sets: SQL[] = [];
  if (usernameChanged) sets.push(sql`username = ${username}`);
  if (emailChanged) sets.push(sql`email = ${email}, email_canonical = ${canonicalEmail(email)}, is_verified = 0`);
  if (passwordChanged) sets.push(sql`hashed_password = ${hashPassword(changes.password!, svc.config.argon2)}`);
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
      ? await batchRows<[UserRow, never, never]>(svc.db, [update, ...revocationStatements(user.id)])
      : await batchRows<[UserRow]>(svc.db, [update]);
  } catch (error) {
    throw uniqueViolation(error) ?? error;
  }
  const updated = toSessionUser(rows[0]!);

  if (emailChanged) {
    audit(svc.log, "auth.email.changed", { user_id: user.id });
    await sendVerification(svc, updated);
    await sendQuietly(svc, emailChangedEmail(user.email, updated.email));
  }
  if (passwordChanged) {
    audit(svc.log, "auth.password.changed", { user_id: user.id });
    await sendQuietly(svc, passwordChangedEmail(updated.email));
  }
  if (revoke) audit(svc.log, "auth.sessions.revoked", { user_id: user.id, reason: emailChanged ? "email_change" : "password_change" });
  return { user: updated, revoked: revoke };
}
