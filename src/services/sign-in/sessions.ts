import { and, eq, lte, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import type { SessionUser } from "../../auth/session-user";
import {
  ACCESS_TOKEN_TTL_SECONDS,
  fingerprint,
  REFRESH_TOKEN_TTL_SECONDS,
  randomToken,
  SESSION_TTL_SECONDS,
  signAccessToken,
} from "../../auth/tokens";
import type { Services } from "../../container";
import { batchRows, type Db } from "../../db/client";
import { columnsOf, type RowOf } from "../../db/rows";
import { refreshTokens, users } from "../../db/schema";

/** Tokens handed to a client at login or refresh. */
export interface SessionGrant {
  accessToken: string;
  refreshToken: string;
  /** Seconds until the refresh token expires (its cookie's Max-Age). */
  refreshExpiresIn: number;
}

// Issue times and revocation epochs both come from the database clock, so whether a token was
// issued before a revocation is decided by D1's commit order, not by the clocks of two isolates.
// A new token is never dated before the user's current epoch.
const NOW_MS = sql`CAST(unixepoch('subsec') * 1000 AS INTEGER)`;
// Unqualified `tokens_valid_after`: only `users` has it, so it reads the same beside `refresh_tokens`.
const ISSUED_AT_MS = sql<number>`max(${NOW_MS}, tokens_valid_after)`;
// A replay this soon after a rotation is most likely two tabs refreshing at once: refused, but
// the session survives. Later replays end the whole session (the token may have been stolen).
const REUSE_GRACE_SECONDS = 10;

interface IssueRow {
  user_id: number;
  family_id: string;
  issued_at_ms: number;
  refresh_expires_at: number;
  now: number;
}

async function grantFrom(secret: string, row: IssueRow, refreshToken: string): Promise<SessionGrant> {
  const issuedAt = Math.floor(row.issued_at_ms / 1000);
  return {
    accessToken: await signAccessToken(secret, {
      userId: row.user_id,
      sessionId: row.family_id,
      issuedAtMs: row.issued_at_ms,
      expiresAt: issuedAt + ACCESS_TOKEN_TTL_SECONDS,
    }),
    refreshToken,
    refreshExpiresIn: Math.max(0, row.refresh_expires_at - row.now),
  };
}

/** The account state a login checked the credentials against; the session starts only if it still holds. */
export interface CheckedState {
  hashedPassword: string | null;
  tokensValidAfter: number;
}

/** A session about to start: the statements to put in a batch, and how to read its grant from their results. */
export interface PendingSession {
  /** Three statements; the last returns the issue row when the session started. */
  statements: [SQLWrapper, SQL, SQL];
  grant(issued: unknown[]): Promise<SessionGrant | null>;
}

/**
 * The statements that start a session (a new refresh-token family) for `userId` if `guard` (SQL
 * over the `users` row, which must include `id = userId`) holds when they run; `recordLogin` also
 * stamps `last_login_at`. A session that replaces another without a sign-in (`recordLogin` false)
 * keeps that one's sign-in time, `continuing`. Callers put them in one batch after the writes the
 * session depends on.
 */
export function sessionStatements(
  db: Db,
  secret: string,
  userId: number,
  guard: SQL,
  { recordLogin, continuing = null }: { recordLogin: boolean; continuing?: number | null },
): PendingSession {
  const refreshToken = randomToken();
  const familyId = randomToken();
  return {
    statements: [
      // Housekeeping: this user's expired tokens go when a new session starts.
      db.delete(refreshTokens).where(and(eq(refreshTokens.user_id, userId), lte(refreshTokens.expires_at, sql`unixepoch()`))),
      // Raw (this and the next): the session starts only where `guard` holds, a condition of each write itself.
      sql`INSERT INTO refresh_tokens (fingerprint, user_id, family_id, expires_at, session_expires_at, session_started_at)
        SELECT ${fingerprint(refreshToken)}, id, ${familyId},
          unixepoch() + ${REFRESH_TOKEN_TTL_SECONDS}, unixepoch() + ${SESSION_TTL_SECONDS}, ${recordLogin ? sql`unixepoch()` : sql`${continuing}`}
        FROM users WHERE ${guard}`,
      sql`UPDATE users
        SET last_login_at = CASE WHEN ${recordLogin ? 1 : 0} = 1 THEN unixepoch() ELSE last_login_at END
        WHERE ${guard}
        RETURNING id AS user_id, ${familyId} AS family_id, ${ISSUED_AT_MS} AS issued_at_ms,
          unixepoch() + ${REFRESH_TOKEN_TTL_SECONDS} AS refresh_expires_at, unixepoch() AS now`,
    ],
    async grant(issued) {
      const row = issued[0] as IssueRow | undefined;
      return row ? grantFrom(secret, row, refreshToken) : null;
    },
  };
}

/** SQL that holds while the account is active and in the state a credential check saw. */
export function unchangedSince(userId: number, checked: CheckedState): SQL {
  return sql`id = ${userId} AND is_active = 1 AND hashed_password IS ${checked.hashedPassword}
    AND tokens_valid_after = ${checked.tokensValidAfter}`;
}

/**
 * Starts a session for a user whose credentials were checked, in one round trip. Returns null,
 * and starts nothing, when the account changed since the check (deactivated, password changed or
 * reset, sessions revoked while the password was being verified).
 */
export async function startSession(
  svc: Pick<Services, "db">,
  secret: string,
  userId: number,
  checked: CheckedState,
  options: { recordLogin: boolean },
): Promise<SessionGrant | null> {
  const pending = sessionStatements(svc.db, secret, userId, unchangedSince(userId, checked), options);
  const [, , issued] = await batchRows<[never, never, IssueRow]>(svc.db, pending.statements);
  return pending.grant(issued);
}

/** Why a refresh was refused: `raced` is a token rotated moments ago (another tab won), `replayed` ended its session. */
export type RefreshRefusal = "invalid" | "raced" | "replayed";

/**
 * Exchanges a refresh token for a new pair, in one round trip. The presented token is marked
 * rotated and its successor keeps the session's absolute expiry. Refuses an unknown, expired,
 * rotated or revoked token, or an inactive account. Two concurrent refreshes with one token
 * cannot both succeed: D1 runs batches one at a time, and the second finds it rotated.
 */
export async function rotateSession(
  svc: Pick<Services, "db">,
  secret: string,
  presented: string,
): Promise<{ grant: SessionGrant } | { refused: RefreshRefusal; userId: number | null }> {
  const old = fingerprint(presented);
  const refreshToken = randomToken();
  const next = fingerprint(refreshToken);
  const [replayed, , , rows, previous] = await batchRows<
    [{ user_id: number }, never, never, IssueRow, { user_id: number; rotated_at: number | null; now: number }]
  >(svc.db, [
    // Raw (this and the next two): compare-and-set; each write is decided by its own condition on the token's state.
    sql`DELETE FROM refresh_tokens WHERE family_id = (
      SELECT family_id FROM refresh_tokens
      WHERE fingerprint = ${old} AND rotated_at IS NOT NULL AND rotated_at < unixepoch() - ${REUSE_GRACE_SECONDS})
      RETURNING user_id`,
    sql`INSERT INTO refresh_tokens (fingerprint, user_id, family_id, expires_at, session_expires_at, session_started_at)
      SELECT ${next}, r.user_id, r.family_id,
        min(unixepoch() + ${REFRESH_TOKEN_TTL_SECONDS}, r.session_expires_at), r.session_expires_at, r.session_started_at
      FROM refresh_tokens r JOIN users u ON u.id = r.user_id
      WHERE r.fingerprint = ${old} AND r.rotated_at IS NULL AND u.is_active = 1
        AND r.expires_at > unixepoch() AND r.session_expires_at > unixepoch()`,
    sql`UPDATE refresh_tokens SET rotated_at = unixepoch()
      WHERE fingerprint = ${old} AND rotated_at IS NULL
        AND EXISTS (SELECT 1 FROM refresh_tokens WHERE fingerprint = ${next})`,
    svc.db
      .select({
        user_id: refreshTokens.user_id,
        family_id: refreshTokens.family_id,
        issued_at_ms: ISSUED_AT_MS.as("issued_at_ms"),
        refresh_expires_at: sql<number>`${refreshTokens.expires_at}`.as("refresh_expires_at"),
        now: sql<number>`unixepoch()`.as("now"),
      })
      .from(refreshTokens)
      .innerJoin(users, eq(users.id, refreshTokens.user_id))
      .where(eq(refreshTokens.fingerprint, next)),
    svc.db
      .select({ user_id: refreshTokens.user_id, rotated_at: refreshTokens.rotated_at, now: sql<number>`unixepoch()`.as("now") })
      .from(refreshTokens)
      .where(eq(refreshTokens.fingerprint, old)),
  ]);
  const row = rows[0];
  if (row) return { grant: await grantFrom(secret, row, refreshToken) };
  if (replayed.length > 0) return { refused: "replayed", userId: replayed[0]!.user_id };
  const before = previous[0];
  const raced = before?.rotated_at != null && before.now - before.rotated_at <= REUSE_GRACE_SECONDS;
  return { refused: raced ? "raced" : "invalid", userId: before?.user_id ?? null };
}

/** Ends the session a refresh token belongs to; returns its user id, or null when there was none. */
export async function endSessionByRefreshToken(svc: Pick<Services, "db">, presented: string): Promise<number | null> {
  const family = svc.db
    .select({ family_id: refreshTokens.family_id })
    .from(refreshTokens)
    .where(eq(refreshTokens.fingerprint, fingerprint(presented)));
  const rows = await svc.db.all<{ user_id: number }>(
    svc.db.delete(refreshTokens).where(eq(refreshTokens.family_id, family)).returning({ user_id: refreshTokens.user_id }),
  );
  return rows[0]?.user_id ?? null;
}

/** Ends a session by its id (from an access token); returns whether it existed. */
export async function endSessionById(svc: Pick<Services, "db">, userId: number, sessionId: string): Promise<boolean> {
  const rows = await svc.db.all<{ user_id: number }>(
    svc.db
      .delete(refreshTokens)
      .where(and(eq(refreshTokens.family_id, sessionId), eq(refreshTokens.user_id, userId)))
      .returning({ user_id: refreshTokens.user_id }),
  );
  return rows.length > 0;
}

/**
 * The two statements that revoke every token of a user, to be put in a `batchRows` after the
 * change that calls for it: refresh state is purged first, then the epoch is stamped one
 * millisecond past the database clock, so every access token issued so far is refused. `onlyIf`
 * (SQL) makes both conditional, for changes that may lose a race.
 */
export function revocationStatements(userId: number, onlyIf: SQL = sql`1`): [SQL, SQL] {
  // Raw: guarded writes (`onlyIf` is the caller's race condition), and the epoch comes from the database clock.
  return [
    sql`DELETE FROM refresh_tokens WHERE user_id = ${userId} AND (${onlyIf})`,
    sql`UPDATE users SET tokens_valid_after = ${NOW_MS} + 1 WHERE id = ${userId} AND (${onlyIf})`,
  ];
}

/** Revokes every refresh and access token of a user (sign out everywhere), in one round trip. */
export async function revokeAllSessions(svc: Pick<Services, "db">, userId: number): Promise<void> {
  await batchRows(svc.db, revocationStatements(userId));
}

/** The stored columns of a `UserRow`. */
const USER_STORED = [
  "id",
  "email",
  "username",
  "hashed_password",
  "is_active",
  "is_verified",
  "is_superuser",
  "role",
  "profile_visibility",
  "last_login_at",
  "upload_file_count",
  "upload_total_bytes",
  "tokens_valid_after",
  "recovery_codes_generation",
  "terms_accepted_version",
  "terms_accepted_at",
  "orcid",
  "release_credit",
  "created_at",
  "updated_at",
] as const;

/** A user as `USER_COLUMNS` (or `USER_FIELDS`) selects it: stored columns, and whether TOTP is on. */
export type UserRow = RowOf<typeof users, (typeof USER_STORED)[number]> & { totp_enabled: number };

/** Columns of `UserRow` (unqualified: usable in SELECT and RETURNING), for every hand-written query that loads a `SessionUser`. */
export const USER_COLUMNS = sql.raw([...USER_STORED, "(totp_enabled_at IS NOT NULL) AS totp_enabled"].join(", "));

/** The same columns as the query builder's selection. */
export const USER_FIELDS = {
  ...columnsOf(users, USER_STORED),
  totp_enabled: sql<number>`(${users.totp_enabled_at} IS NOT NULL)`.as("totp_enabled"),
};

/** Maps a row selected (or returned) with `USER_COLUMNS`. */
export function toSessionUser(row: UserRow): SessionUser {
  return {
    id: row.id,
    email: row.email,
    username: row.username,
    hashedPassword: row.hashed_password,
    isActive: row.is_active === 1,
    isVerified: row.is_verified === 1,
    isSuperuser: row.is_superuser === 1,
    role: row.role,
    profileVisibility: row.profile_visibility,
    lastLoginAt: row.last_login_at,
    uploadFileCount: row.upload_file_count,
    uploadTotalBytes: row.upload_total_bytes,
    tokensValidAfter: row.tokens_valid_after,
    totpEnabled: row.totp_enabled === 1,
    recoveryCodesGeneration: row.recovery_codes_generation,
    termsAcceptedVersion: row.terms_accepted_version,
    termsAcceptedAt: row.terms_accepted_at,
    orcid: row.orcid,
    releaseCredit: row.release_credit === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** What an access token claims, as its revocation check needs it. */
export interface AccessCheckClaims {
  userId: number;
  sessionId: string;
  issuedAtMs: number;
}

/**
 * The statement of an access token's revocation check: the user with their revocation epoch,
 * and their session's liveness and sign-in time (a number, 0 when not recorded; NULL when the
 * session ended) in one row. Read it alone (`userForAccessToken`) or at the front of a read's
 * batch (src/middleware/read-copies.ts), and judge its rows with `userFromAccessCheck`.
 */
export function accessCheckStatement(claims: AccessCheckClaims): SQL {
  // Raw: the session's liveness is a correlated sub-select, and this runs on every signed-in request (carried as SQL).
  return sql`
    SELECT ${USER_COLUMNS},
      (SELECT coalesce(r.session_started_at, 0) FROM refresh_tokens r
        WHERE r.family_id = ${claims.sessionId} AND r.user_id = users.id AND r.rotated_at IS NULL
          AND r.expires_at > unixepoch() AND r.session_expires_at > unixepoch()
        LIMIT 1) AS session_started_at
    FROM users WHERE id = ${claims.userId}`;
}

/**
 * The user of an access check's rows, or null when the token no longer counts: the account is
 * gone or inactive, the token predates the user's revocation epoch, or its session was ended
 * (logout) or expired.
 */
export function userFromAccessCheck(rows: readonly unknown[], claims: AccessCheckClaims): SessionUser | null {
  const row = rows[0] as (UserRow & { session_started_at: number | null }) | undefined;
  if (!row || row.is_active !== 1 || row.session_started_at === null) return null;
  if (claims.issuedAtMs < row.tokens_valid_after) return null;
  return { ...toSessionUser(row), sessionStartedAt: row.session_started_at === 0 ? null : row.session_started_at };
}

/** The user an access token speaks for, in one round trip, or null when the token no longer counts (`userFromAccessCheck`). */
export async function userForAccessToken(svc: Pick<Services, "db">, claims: AccessCheckClaims): Promise<SessionUser | null> {
  return userFromAccessCheck(await svc.db.all(accessCheckStatement(claims)), claims);
}
