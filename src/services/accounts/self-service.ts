import { eq, sql } from "drizzle-orm";
import { hashPassword } from "../../auth/password";
import { assertAcceptablePassword } from "../../auth/password-policy";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { users } from "../../db/schema";
import { audit } from "../../lib/audit";
import { canonicalEmail, normalizeEmail } from "../../lib/email-address";
import { sendQuietly } from "../platform/email";
import { revocationStatements, toSessionUser, USER_FIELDS, type UserRow } from "../sign-in/sessions";
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
  /** Checked by the route (`isValidOrcid`); null removes it. */
  orcid?: string | null;
  release_credit?: boolean;
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

  const sets: Partial<typeof users.$inferInsert> = {};
  if (usernameChanged) sets.username = username;
  if (emailChanged) {
    sets.email = email;
    sets.email_canonical = canonicalEmail(email);
    sets.is_verified = false;
  }
  if (passwordChanged) sets.hashed_password = hashPassword(changes.password!, svc.config.argon2);
  const visibility = changes.preferences?.profile_visibility;
  if (visibility !== undefined && visibility !== user.profileVisibility) sets.profile_visibility = visibility;
  if (changes.orcid !== undefined && changes.orcid !== user.orcid) sets.orcid = changes.orcid;
  const creditChanged = changes.release_credit !== undefined && changes.release_credit !== user.releaseCredit;
  if (creditChanged) sets.release_credit = changes.release_credit;
  if (Object.keys(sets).length === 0) return { user, revoked: false };

  const revoke = emailChanged || passwordChanged;
  const update = svc.db
    .update(users)
    .set({ ...sets, updated_at: sql`unixepoch()` })
    .where(eq(users.id, user.id))
    .returning(USER_FIELDS);
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
  if (creditChanged) audit(svc.log, "account.release_credit.changed", { user_id: user.id, release_credit: updated.releaseCredit });
  if (revoke) audit(svc.log, "auth.sessions.revoked", { user_id: user.id, reason: emailChanged ? "email_change" : "password_change" });
  return { user: updated, revoked: revoke };
}
