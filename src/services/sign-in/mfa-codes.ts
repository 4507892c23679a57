import { eq, sql } from "drizzle-orm";
import { isTotpShaped, matchTotp, normalizeRecoveryCode, recoveryCodeHash } from "../../auth/totp";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { columnsOf } from "../../db/rows";
import { users } from "../../db/schema";
import { type DataKeyRing, openField, SealedKeyUnavailable } from "../../lib/data-encryption";
import { ApiError } from "../../lib/problem";

/** The AAD of a user's sealed TOTP seed: a seed copied to another account's row does not open. */
export const totpContext = (userId: number) => `totp:${userId}`;

/** A code as the user typed it, resolved to what it can be spent as. */
export type MfaCode = { kind: "totp"; step: number } | { kind: "recovery"; hash: string } | null;

interface TotpState {
  totp_secret: string | null;
  totp_last_step: number | null;
}

/**
 * 403 for an authenticator code of an account whose sealed seed names a data key that is no
 * longer configured (a retired key whose values were not re-encrypted; docs/operations.md, Key
 * rotation). The account stays usable: recovery codes need no seed, and with one the user can
 * turn TOTP off and enrol again; an administrator can reset the enrolment too.
 */
export function seedUnreadable(): ApiError {
  return new ApiError(403, {
    code: "TOTP_SEED_UNREADABLE",
    detail:
      "Your authenticator's codes cannot be checked any more (the key that protected its secret was retired). " +
      "Use one of your recovery codes instead, then set up the authenticator again; without recovery codes, ask an administrator to reset your two-step sign-in.",
  });
}

/**
 * What `code` is for this account: an authenticator code of an acceptable step (current one ±1
 * and after the last accepted step; `null` otherwise), or a recovery code's hash (whether it is
 * still unspent is for the spending statement to find). Needs the sealed seed from `state`;
 * throws `seedUnreadable()` when its key is gone.
 */
export async function resolveMfaCode(dataKey: DataKeyRing, userId: number, state: TotpState, code: string): Promise<MfaCode> {
  if (isTotpShaped(code)) {
    if (!state.totp_secret) return null;
    let seed: Uint8Array;
    try {
      seed = await openField(dataKey, state.totp_secret, totpContext(userId));
    } catch (error) {
      if (error instanceof SealedKeyUnavailable) throw seedUnreadable();
      throw error;
    }
    const step = matchTotp(seed, code, Date.now() / 1000, state.totp_last_step);
    return step === null ? null : { kind: "totp", step };
  }
  const normalized = normalizeRecoveryCode(code);
  return normalized ? { kind: "recovery", hash: recoveryCodeHash(normalized) } : null;
}

/**
 * The statement that spends a resolved code, atomically: it records the TOTP step only if it is
 * later than the last accepted one (two requests with one code: one wins), or deletes the unused
 * recovery code. It changes a row only when the code counts. `when` adds a condition.
 */
export function spendStatement(userId: number, code: NonNullable<MfaCode>, when = sql`1`) {
  // Raw: one-time-code consumption, decided by the statement's own condition (a later step, an unused code).
  return code.kind === "totp"
    ? sql`UPDATE users SET totp_last_step = ${code.step}
        WHERE id = ${userId} AND totp_secret IS NOT NULL AND coalesce(totp_last_step, -1) < ${code.step} AND (${when})
        RETURNING id`
    : sql`DELETE FROM recovery_codes WHERE user_id = ${userId} AND code_hash = ${code.hash} AND (${when}) RETURNING user_id AS id`;
}

/** SQL that holds while a resolved code is still spendable (the claim condition of a batch). */
export function spendableCondition(userId: number, code: NonNullable<MfaCode>) {
  // Raw: an EXISTS guard that the claiming statements of a batch embed in their own conditions.
  return code.kind === "totp"
    ? sql`EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND totp_secret IS NOT NULL AND coalesce(totp_last_step, -1) < ${code.step})`
    : sql`EXISTS (SELECT 1 FROM recovery_codes WHERE user_id = ${userId} AND code_hash = ${code.hash})`;
}

/**
 * Checks and spends a signed-in user's authenticator or recovery code, in two round trips (read
 * the sealed seed, then spend). False for a wrong, replayed or already-used code; the 403 of
 * `seedUnreadable()` (returned, not thrown) for an authenticator code whose seed cannot be opened.
 */
export async function spendMfaCode(
  svc: Pick<Services, "db">,
  dataKey: DataKeyRing,
  userId: number,
  code: string,
): Promise<boolean | ApiError> {
  const rows = await svc.db.all<TotpState>(
    svc.db
      .select(columnsOf(users, ["totp_secret", "totp_last_step"]))
      .from(users)
      .where(eq(users.id, userId)),
  );
  if (!rows[0]) return false;
  let resolved: MfaCode;
  try {
    resolved = await resolveMfaCode(dataKey, userId, rows[0], code);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  if (!resolved) return false;
  const [spent] = await batchRows<[{ id: number }]>(svc.db, [spendStatement(userId, resolved)]);
  return spent.length === 1;
}
