import { and, eq, gt, isNotNull, isNull, lte, sql } from "drizzle-orm";
import type { SessionUser } from "../../auth/session-user";
import { fingerprint, randomToken } from "../../auth/tokens";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import type { RowOf } from "../../db/rows";
import { mfaChallenges, users } from "../../db/schema";
import { audit } from "../../lib/audit";
import { ApiError } from "../../lib/problem";
import { reserveWrongSecret } from "../../rate-limits/failure-budgets";
import { type MfaCode, resolveMfaCode, spendableCondition, spendStatement } from "./mfa-codes";
import { type SessionGrant, sessionStatements, unchangedSince } from "./sessions";

/** How long a login challenge stays usable. */
export const MFA_CHALLENGE_TTL_SECONDS = 10 * 60;

export type ChallengeTransport = "bearer" | "cookie";

function invalidChallenge(): ApiError {
  return new ApiError(401, {
    code: "MFA_TOKEN_INVALID",
    detail: "The challenge token is invalid, expired (10 minutes) or already used; sign in again.",
  });
}

/**
 * 401 for a wrong, replayed or spent code at the login challenge (decisions.md: the status the
 * platform's clients expect there); the challenge stays usable. Step-ups answer 403 instead: their
 * session is fine.
 */
function wrongChallengeCode(): ApiError {
  return new ApiError(401, {
    code: "MFA_CODE_INVALID",
    detail: "The authenticator or recovery code is not correct, or was already used.",
  });
}

/**
 * Starts the second step of a TOTP account's login, in one round trip: a random challenge token
 * (stored as its fingerprint) bound to the transport that logged in and to the account's state
 * the password was checked against. Null when the account changed meanwhile.
 */
export async function startChallenge(svc: Pick<Services, "db">, user: SessionUser, transport: ChallengeTransport): Promise<string | null> {
  const token = randomToken();
  const [, inserted] = await batchRows<[never, { user_id: number }]>(svc.db, [
    svc.db.delete(mfaChallenges).where(and(eq(mfaChallenges.user_id, user.id), lte(mfaChallenges.expires_at, sql`unixepoch()`))),
    // Raw: INSERT … SELECT that starts the challenge only while the account is as the password check found it.
    sql`INSERT INTO mfa_challenges (fingerprint, user_id, transport, tokens_valid_after, expires_at)
      SELECT ${fingerprint(token)}, id, ${transport}, tokens_valid_after, unixepoch() + ${MFA_CHALLENGE_TTL_SECONDS}
      FROM users WHERE ${unchangedSince(user.id, user)} AND totp_secret IS NOT NULL
      RETURNING user_id`,
  ]);
  return inserted.length === 1 ? token : null;
}

/** The challenge with its account's TOTP state. */
type ChallengeRow = RowOf<typeof mfaChallenges, "user_id" | "transport" | "tokens_valid_after"> &
  RowOf<typeof users, "totp_secret" | "totp_last_step">;

/**
 * Completes a login challenge with an authenticator or recovery code, in two round trips and one
 * unit of the account's wrong-secret budget (refunded on success). The second round trip is one
 * batch that claims the challenge for this request (a per-request nonce), spends the code (a TOTP
 * step later than the last accepted one, or an unused recovery code) and starts the session, each
 * statement conditional on the claim, so that two concurrent requests with one code, or with one
 * challenge, cannot both sign in. A wrong code leaves the challenge usable.
 */
export async function completeChallenge(
  svc: Services,
  token: string,
  code: string,
): Promise<{ transport: ChallengeTransport; userId: number; grant: SessionGrant }> {
  const challenge = fingerprint(token);
  const rows = await svc.db.all<ChallengeRow>(
    svc.db
      .select({
        user_id: mfaChallenges.user_id,
        transport: mfaChallenges.transport,
        tokens_valid_after: mfaChallenges.tokens_valid_after,
        totp_secret: users.totp_secret,
        totp_last_step: users.totp_last_step,
      })
      .from(mfaChallenges)
      .innerJoin(users, eq(users.id, mfaChallenges.user_id))
      .where(
        and(
          eq(mfaChallenges.fingerprint, challenge),
          isNull(mfaChallenges.claimed_by),
          gt(mfaChallenges.expires_at, sql`unixepoch()`),
          eq(users.is_active, true),
          eq(users.tokens_valid_after, mfaChallenges.tokens_valid_after),
          isNotNull(users.totp_secret),
        ),
      ),
  );
  const row = rows[0];
  if (!row) throw invalidChallenge();

  const reservation = await reserveWrongSecret(svc, row.user_id);
  const refuse = (): never => {
    audit(svc.log, "auth.mfa.challenge.failed", { user_id: row.user_id, transport: row.transport });
    throw wrongChallengeCode();
  };
  let resolved: MfaCode;
  try {
    resolved = await resolveMfaCode(svc.config.dataKey, row.user_id, row, code);
  } catch (error) {
    // An unreadable seed is not a wrong code: the budget unit goes back, the challenge stays usable.
    await reservation.refund();
    throw error;
  }
  if (!resolved) refuse();

  const nonce = randomToken();
  const claimed = sql`EXISTS (SELECT 1 FROM mfa_challenges WHERE fingerprint = ${challenge} AND claimed_by = ${nonce})`;
  const session = sessionStatements(
    svc.db,
    svc.config.tokenSecret,
    row.user_id,
    sql`id = ${row.user_id} AND is_active = 1 AND tokens_valid_after = ${row.tokens_valid_after} AND ${claimed}`,
    { recordLogin: true },
  );
  const results = await batchRows<unknown[]>(svc.db, [
    // Raw (the claim, the spend, the closing delete): compare-and-set; each runs only where this request's claim holds.
    // The claim also needs the account as the login left it, so a revocation in between spends nothing.
    sql`UPDATE mfa_challenges SET claimed_by = ${nonce}
      WHERE fingerprint = ${challenge} AND claimed_by IS NULL AND expires_at > unixepoch() AND ${spendableCondition(row.user_id, resolved!)}
        AND EXISTS (SELECT 1 FROM users WHERE id = ${row.user_id} AND is_active = 1 AND tokens_valid_after = ${row.tokens_valid_after})`,
    spendStatement(row.user_id, resolved!, claimed),
    ...session.statements,
    sql`DELETE FROM mfa_challenges WHERE fingerprint = ${challenge} AND claimed_by = ${nonce}`,
  ]);
  const grant = await session.grant(results[results.length - 2]!);
  if (!grant) refuse();
  await reservation.refund();
  audit(svc.log, "auth.mfa.challenge.succeeded", { user_id: row.user_id, transport: row.transport, method: resolved!.kind });
  audit(svc.log, "auth.login.succeeded", { transport: row.transport, user_id: row.user_id, two_step: true });
  return { transport: row.transport, userId: row.user_id, grant: grant! };
}
