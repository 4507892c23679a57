import { eq, sql } from "drizzle-orm";
import { hashPassword } from "../../auth/password";
import { assertAcceptablePassword } from "../../auth/password-policy";
import { checkLinkToken, parseLinkToken, RESET_TOKEN_TTL_SECONDS, signLinkToken } from "../../auth/tokens";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { columnsOf } from "../../db/rows";
import { users } from "../../db/schema";
import { audit } from "../../lib/audit";
import { canonicalEmail } from "../../lib/email-address";
import { ApiError } from "../../lib/problem";
import { enforceLimits, subjects } from "../../rate-limits/client";
import { passwordResetDoneEmail, passwordResetEmail } from "../accounts/emails";
import { sendQuietly } from "../platform/email";
import { revocationStatements } from "./sessions";

// A reset token is bound to the password hash it was issued under; accounts without a password
// (identity-provider sign-in only) bind to this marker and can set one by reset.
const NO_PASSWORD = "no-password";

// The token is bound to the password hash and the address it was sent to: a reset, a password
// change or an email change each void every earlier link.
const resetBinding = (user: { hashed_password: string | null; email: string }) => `${user.hashed_password ?? NO_PASSWORD}|${user.email}`;

/**
 * Emails a reset link when the address belongs to an active account. The caller answers the same
 * accepted response in every case; the email goes out after the response (`defer`) so that its
 * delivery time cannot tell known addresses from unknown ones.
 */
export async function requestPasswordReset(svc: Services, address: string): Promise<void> {
  // Per mailbox, whatever the client IP, and whether or not an account uses it.
  const mailbox = canonicalEmail(address);
  await enforceLimits(svc, subjects.email(svc.config.tokenSecret, mailbox), ["forgot-password-email"]);
  const rows = await svc.db.all<{ id: number; email: string; hashed_password: string | null; is_active: number }>(
    svc.db
      .select(columnsOf(users, ["id", "email", "hashed_password", "is_active"]))
      .from(users)
      .where(eq(users.email_canonical, mailbox)),
  );
  const user = rows[0];
  if (!user || user.is_active !== 1) return;
  const expiresAt = Math.floor(svc.clock.now() / 1000) + RESET_TOKEN_TTL_SECONDS;
  const token = signLinkToken(svc.config.tokenSecret, "reset", user.id, expiresAt, resetBinding(user));
  svc.defer(sendQuietly(svc, passwordResetEmail(user.email, svc.config.appUrl, token)));
}

function invalidResetToken(): ApiError {
  return new ApiError(400, {
    code: "RESET_TOKEN_INVALID",
    detail: "The reset link is invalid, has expired or was already used; ask for a new one.",
  });
}

/**
 * Sets a new password with a reset token, revokes every session of the account and sends a
 * confirmation without any link or credential. The update is conditional on the hash the token
 * was bound to, so of two concurrent resets with one token exactly one succeeds.
 */
export async function resetPassword(svc: Services, token: string, password: string): Promise<void> {
  const parsed = parseLinkToken(token);
  if (!parsed) throw invalidResetToken();
  const rows = await svc.db.all<{ id: number; email: string; username: string; hashed_password: string | null; is_active: number }>(
    svc.db
      .select(columnsOf(users, ["id", "email", "username", "hashed_password", "is_active"]))
      .from(users)
      .where(eq(users.id, parsed.userId)),
  );
  const user = rows[0];
  const nowSeconds = Math.floor(svc.clock.now() / 1000);
  if (!user || user.is_active !== 1 || !checkLinkToken(svc.config.tokenSecrets, "reset", token, resetBinding(user), nowSeconds)) {
    throw invalidResetToken();
  }
  await assertAcceptablePassword(svc.config, svc.log, password, { username: user.username, email: user.email });
  const hashed = hashPassword(password, svc.config.argon2);
  const [changed] = await batchRows<[{ id: number }, never, never]>(svc.db, [
    // Raw: compare-and-set on the hash the token was bound to (of two resets with one token, one wins).
    sql`UPDATE users SET hashed_password = ${hashed}, updated_at = unixepoch()
      WHERE id = ${user.id} AND hashed_password IS ${user.hashed_password} RETURNING id`,
    // A reset that lost a race revokes nothing: the winner's sessions are not its to end.
    ...revocationStatements(user.id, sql`EXISTS (SELECT 1 FROM users WHERE id = ${user.id} AND hashed_password = ${hashed})`),
  ]);
  if (changed.length === 0) throw invalidResetToken();
  audit(svc.log, "auth.password.reset", { user_id: user.id });
  await sendQuietly(svc, passwordResetDoneEmail(user.email));
}
