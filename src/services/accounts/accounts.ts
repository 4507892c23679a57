import { and, eq, ne, or, sql } from "drizzle-orm";
import { isDisposableEmail, usernameViolation } from "../../auth/account-names";
import { hashPassword } from "../../auth/password";
import { assertAcceptablePassword } from "../../auth/password-policy";
import type { SessionUser } from "../../auth/session-user";
import { checkLinkToken, parseLinkToken, signLinkToken, VERIFY_TOKEN_TTL_SECONDS } from "../../auth/tokens";
import type { Services } from "../../container";
import { isConstraintFailure } from "../../db/constraint-errors";
import { columnsOf } from "../../db/rows";
import { users } from "../../db/schema";
import { audit } from "../../lib/audit";
import { canonicalEmail, normalizeEmail } from "../../lib/email-address";
import { ApiError } from "../../lib/problem";
import { sendQuietly } from "../platform/email";
import { toSessionUser, USER_COLUMNS, USER_FIELDS, type UserRow } from "../sign-in/sessions";
import { verificationEmail } from "./emails";

export interface NewAccount {
  email: string;
  password: string;
  username: string;
}

function fieldProblem(pointer: string, detail: string, code = "VALIDATION_FAILED"): ApiError {
  return new ApiError(422, { code, detail, errors: [{ pointer, detail }] });
}

export function emailTaken(): ApiError {
  return new ApiError(409, {
    code: "EMAIL_ALREADY_REGISTERED",
    detail: "An account with this email address (or another alias of its mailbox) already exists.",
  });
}

export function usernameTaken(): ApiError {
  return new ApiError(409, { code: "USERNAME_TAKEN", detail: "This username is taken." });
}

/** 400 for an address at a disposable-email provider. */
export function assertNotDisposable(email: string): void {
  if (isDisposableEmail(email)) {
    throw new ApiError(400, {
      code: "DISPOSABLE_EMAIL",
      detail: "Addresses of disposable-email providers cannot hold an account; use a permanent address.",
    });
  }
}

/** Refuses a username that breaks the format or is reserved (422 at `pointer`). */
export function assertUsableUsername(username: string, pointer = "/username"): void {
  const violation = usernameViolation(username);
  if (violation) throw fieldProblem(pointer, violation, "USERNAME_INVALID");
}

/** Which of the unique account fields `error` (a failed insert or update) collided on, if any. */
export function uniqueViolation(error: unknown): ApiError | null {
  if (isConstraintFailure(error, "UNIQUE", "users.email")) return emailTaken();
  if (isConstraintFailure(error, "UNIQUE", "users.username")) return usernameTaken();
  return null;
}

/**
 * 409 when an email (by its mailbox) or a username is already held (by an account other than
 * `exceptUserId`). Registration asks before the breach check and the hash, an email change
 * before the step-up; the unique indexes remain the final word under races.
 */
export async function assertAvailable(
  svc: Pick<Services, "db">,
  { email, username }: { email?: string | undefined; username?: string | undefined },
  exceptUserId?: number,
): Promise<void> {
  if (email === undefined && username === undefined) return;
  const holders = or(
    email === undefined ? undefined : eq(users.email, email),
    email === undefined ? undefined : eq(users.email_canonical, canonicalEmail(email)),
    username === undefined ? undefined : eq(users.username, username),
  );
  const others = exceptUserId === undefined ? undefined : ne(users.id, exceptUserId);
  const rows = await svc.db.all<{ email: string; email_canonical: string; username: string }>(
    svc.db
      .select(columnsOf(users, ["email", "email_canonical", "username"]))
      .from(users)
      .where(and(holders, others)),
  );
  if (email !== undefined && rows.some((r) => r.email === email || r.email_canonical === canonicalEmail(email))) {
    throw emailTaken();
  }
  if (rows.length > 0) throw usernameTaken();
}

/** Sends a fresh verification link for the account's current address. */
export async function sendVerification(svc: Services, user: { id: number; email: string }): Promise<void> {
  const expiresAt = Math.floor(svc.clock.now() / 1000) + VERIFY_TOKEN_TTL_SECONDS;
  const token = signLinkToken(svc.config.tokenSecret, "verify", user.id, expiresAt, user.email);
  await sendQuietly(svc, verificationEmail(user.email, svc.config.appUrl, token));
}

/**
 * Registers an unverified contributor and emails a verification link. Cheap rules run first; the
 * breach check and the hash run only for a request that can otherwise succeed.
 */
export async function register(svc: Services, input: NewAccount): Promise<SessionUser> {
  const email = normalizeEmail(input.email);
  assertUsableUsername(input.username);
  assertNotDisposable(email);
  await assertAvailable(svc, { email, username: input.username });
  await assertAcceptablePassword(svc.config, svc.log, input.password, { username: input.username, email });
  const hashed = hashPassword(input.password, svc.config.argon2);
  let rows: UserRow[];
  try {
    rows = await svc.db.all<UserRow>(
      svc.db
        .insert(users)
        .values({ email, email_canonical: canonicalEmail(email), username: input.username, hashed_password: hashed })
        .returning(USER_FIELDS),
    );
  } catch (error) {
    // Two registrations racing past the availability check: the unique indexes decide.
    throw uniqueViolation(error) ?? error;
  }
  const user = toSessionUser(rows[0]!);
  await sendVerification(svc, user);
  return user;
}

function invalidVerifyToken(): ApiError {
  return new ApiError(400, {
    code: "VERIFY_TOKEN_INVALID",
    detail: "The verification link is invalid or has expired; ask for a new one.",
  });
}

/**
 * Marks the account verified when the token was made for its current address (a token sent to
 * an earlier address stops working when the address changes). Verifying twice is harmless.
 */
export async function verifyEmail(svc: Services, token: string): Promise<SessionUser> {
  const parsed = parseLinkToken(token);
  if (!parsed) throw invalidVerifyToken();
  const rows = await svc.db.all<UserRow>(svc.db.select(USER_FIELDS).from(users).where(eq(users.id, parsed.userId)));
  const found = rows[0] ? toSessionUser(rows[0]) : null;
  const nowSeconds = Math.floor(svc.clock.now() / 1000);
  if (!found || !found.isActive || !checkLinkToken(svc.config.tokenSecrets, "verify", token, found.email, nowSeconds)) {
    throw invalidVerifyToken();
  }
  if (found.isVerified) return found;
  // Raw: compare-and-set on the address the token was checked against (a changed address verifies nothing).
  const updated = await svc.db.all<UserRow>(sql`UPDATE users
    SET is_verified = 1, updated_at = unixepoch() WHERE id = ${found.id} AND email = ${found.email}
    RETURNING ${USER_COLUMNS}`);
  if (!updated[0]) throw invalidVerifyToken();
  audit(svc.log, "auth.email.verified", { user_id: found.id });
  return toSessionUser(updated[0]);
}

/**
 * Sends a new verification link when the address belongs to an active, unverified account; the
 * caller answers the same whatever happened, so the route does not reveal which addresses exist.
 */
export async function requestVerification(svc: Services, address: string): Promise<void> {
  const rows = await svc.db.all<{ id: number; email: string; is_active: number; is_verified: number }>(
    svc.db
      .select(columnsOf(users, ["id", "email", "is_active", "is_verified"]))
      .from(users)
      .where(eq(users.email_canonical, canonicalEmail(address))),
  );
  const user = rows[0];
  if (user && user.is_active === 1 && user.is_verified === 0) svc.defer(sendVerification(svc, user));
}
