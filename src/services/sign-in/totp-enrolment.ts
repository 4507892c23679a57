import { eq, sql } from "drizzle-orm";
import type { SessionUser } from "../../auth/session-user";
import { randomToken } from "../../auth/tokens";
import {
  base32Encode,
  matchTotp,
  newRecoveryCodes,
  newTotpSecret,
  normalizeRecoveryCode,
  otpauthUri,
  recoveryCodeHash,
} from "../../auth/totp";
import type { Services } from "../../container";
import { batchRows, type Db } from "../../db/client";
import { columnsOf } from "../../db/rows";
import { mfaChallenges, recoveryCodes, users } from "../../db/schema";
import { audit } from "../../lib/audit";
import { type DataKeyRing, openFieldText, sealField } from "../../lib/data-encryption";
import { fromBase64Url, toBase64Url } from "../../lib/encoding";
import { ApiError } from "../../lib/problem";
import { type MfaCode, resolveMfaCode, spendableCondition, spendStatement, totpContext } from "./mfa-codes";
import { revocationStatements, type SessionGrant, sessionStatements } from "./sessions";
import { assertStepUp } from "./step-up";

/** How long a setup token (the not yet confirmed seed) stays usable. */
export const TOTP_SETUP_TTL_SECONDS = 10 * 60;
const ISSUER = "relab";

const setupContext = (userId: number) => `totp-setup:${userId}`;

export interface TotpSetup {
  setupToken: string;
  secret: string;
  otpauthUri: string;
}

function alreadyEnabled(): ApiError {
  return new ApiError(409, {
    code: "TOTP_ALREADY_ENABLED",
    detail: "Two-step verification is already on; turn it off first to enrol another authenticator.",
  });
}

export function totpNotEnabled(): ApiError {
  return new ApiError(409, { code: "TOTP_NOT_ENABLED", detail: "Two-step verification is not on for this account." });
}

function invalidSetupToken(): ApiError {
  return new ApiError(400, {
    code: "TOTP_SETUP_TOKEN_INVALID",
    detail: "The setup token is invalid or has expired (10 minutes); start again with POST /v1/auth/mfa/totp/setup.",
  });
}

/**
 * Starts an enrolment: a fresh seed, shown once, and a setup token that carries it sealed (AES-GCM,
 * bound to the user, 10 minutes). Nothing is stored until the confirmation proves the
 * authenticator holds the seed, so abandoned setups leave nothing behind.
 */
export async function beginTotpSetup(svc: Pick<Services, "config" | "clock">, user: SessionUser): Promise<TotpSetup> {
  if (user.totpEnabled) throw alreadyEnabled();
  const seed = newTotpSecret();
  const expiresAt = Math.floor(svc.clock.now() / 1000) + TOTP_SETUP_TTL_SECONDS;
  const payload = JSON.stringify({ seed: toBase64Url(seed), exp: expiresAt });
  return {
    setupToken: await sealField(svc.config.dataKey, payload, setupContext(user.id)),
    secret: base32Encode(seed),
    otpauthUri: otpauthUri({ secret: seed, issuer: ISSUER, account: user.email }),
  };
}

async function openSetupToken(dataKey: DataKeyRing, userId: number, token: string): Promise<Uint8Array> {
  try {
    const { seed, exp } = JSON.parse(await openFieldText(dataKey, token, setupContext(userId))) as { seed: string; exp: number };
    if (typeof exp !== "number" || exp <= Date.now() / 1000) throw invalidSetupToken();
    return fromBase64Url(seed);
  } catch {
    throw invalidSetupToken();
  }
}

/** Ten new recovery codes, as shown to the user and as stored (hashes). */
function freshRecoveryCodes(): { shown: string[]; hashes: string[] } {
  const shown = newRecoveryCodes();
  return { shown, hashes: shown.map((code) => recoveryCodeHash(normalizeRecoveryCode(code)!)) };
}

export interface TotpConfirmation {
  recoveryCodes: string[];
  grant: SessionGrant;
}

/**
 * Turns TOTP on: step-up (the current password, or a recent sign-in without one), then the first
 * code of the new seed, under one unit of the wrong-secret budget. In one batch: the sealed seed
 * is stored (only if TOTP is still off: a concurrent confirmation loses with 409), ten recovery
 * codes replace any old ones, every session and token of the account is revoked, and a new
 * session starts for the enrolling device. Its first code's step counts as used.
 */
export async function confirmTotp(
  svc: Services,
  user: SessionUser,
  input: { setupToken: string; code: string; currentPassword?: string | undefined },
): Promise<TotpConfirmation> {
  if (user.totpEnabled) throw alreadyEnabled();
  const seed = await openSetupToken(svc.config.dataKey, user.id, input.setupToken);
  let step: number | null = null;
  await assertStepUp(
    svc,
    user,
    { currentPassword: input.currentPassword },
    {
      operation: "Turning on two-step verification",
      mfa: false,
      extra: async () => (step = matchTotp(seed, input.code, Date.now() / 1000, null)) !== null,
    },
  );

  const sealed = await sealField(svc.config.dataKey, seed, totpContext(user.id));
  // The sealed value is unique (random IV): the rest of the batch runs only if this request stored it.
  const stored = sql`EXISTS (SELECT 1 FROM users WHERE id = ${user.id} AND totp_secret = ${sealed})`;
  const codes = freshRecoveryCodes();
  const session = sessionStatements(
    svc.db,
    svc.config.tokenSecret,
    user.id,
    sql`id = ${user.id} AND is_active = 1 AND totp_secret = ${sealed}`,
    {
      recordLogin: false,
      // The enrolling device's new session continues its old one: no one signed in just now.
      continuing: user.sessionStartedAt ?? null,
    },
  );
  const results = await batchRows<unknown[]>(svc.db, [
    // Raw (this and the next two): the seed is stored only while TOTP is off, and the codes replaced only
    // where this request stored it (compare-and-set); the new codes come from one json_each.
    sql`UPDATE users SET totp_secret = ${sealed}, totp_enabled_at = unixepoch(), totp_last_step = ${step}, updated_at = unixepoch()
      WHERE id = ${user.id} AND is_active = 1 AND totp_secret IS NULL`,
    sql`DELETE FROM recovery_codes WHERE user_id = ${user.id} AND ${stored}`,
    sql`INSERT INTO recovery_codes (user_id, code_hash) SELECT ${user.id}, value FROM json_each(${JSON.stringify(codes.hashes)}) WHERE ${stored}`,
    ...revocationStatements(user.id, stored),
    ...session.statements,
  ]);
  const grant = await session.grant(results[results.length - 1]!);
  if (!grant) throw alreadyEnabled();
  audit(svc.log, "auth.mfa.enabled", { user_id: user.id });
  audit(svc.log, "auth.sessions.revoked", { user_id: user.id, reason: "totp_enabled" });
  return { recoveryCodes: codes.shown, grant };
}

/** The statements that remove a user's TOTP enrolment: seed, replay marker, recovery codes, pending challenges. */
export function totpRemovalStatements(db: Db, userId: number) {
  return [
    db
      .update(users)
      .set({ totp_secret: null, totp_enabled_at: null, totp_last_step: null, updated_at: sql`unixepoch()` })
      .where(eq(users.id, userId)),
    db.delete(recoveryCodes).where(eq(recoveryCodes.user_id, userId)),
    db.delete(mfaChallenges).where(eq(mfaChallenges.user_id, userId)),
  ] as const;
}

/** Turns TOTP off after the step-up (password when the account has one, and a code). */
export async function disableTotp(
  svc: Services,
  user: SessionUser,
  input: { code: string; currentPassword?: string | undefined },
): Promise<void> {
  if (!user.totpEnabled) throw totpNotEnabled();
  await assertStepUp(
    svc,
    user,
    { currentPassword: input.currentPassword, mfaCode: input.code },
    {
      operation: "Turning off two-step verification",
    },
  );
  await batchRows(svc.db, [...totpRemovalStatements(svc.db, user.id)]);
  audit(svc.log, "auth.mfa.disabled", { user_id: user.id });
}

/** 409 for the loser of two concurrent regenerations: the other one's codes are the valid ones. */
export function recoveryCodesChanged(): ApiError {
  return new ApiError(409, {
    code: "RECOVERY_CODES_CHANGED",
    detail:
      "The recovery codes were regenerated by another request at the same time; its codes are the ones that work. " +
      "Regenerate again if you did not receive them.",
  });
}

const REGENERATION_STATE = columnsOf(users, ["totp_secret", "totp_last_step", "recovery_codes_generation"]);

interface RegenerationState {
  totp_secret: string | null;
  totp_last_step: number | null;
  recovery_codes_generation: string | null;
}

/**
 * Spends `code` and replaces the recovery codes with `hashes`, as a compare-and-set on the
 * account's code generation `seen` (as the request found it when it authenticated, so that two
 * requests sent together compare against the same value), in two round trips: read the sealed
 * seed, then one batch that claims a new generation only while the enrolment and the generation
 * are those seen and the code is still spendable, and spends the code and replaces the codes only
 * if that claim is this request's. Of two concurrent regenerations exactly one wins; the other
 * changes nothing and is told so (409): the codes it would have shown never exist.
 */
async function spendAndReplace(
  svc: Services,
  userId: number,
  seen: string | null,
  code: string,
  hashes: string[],
): Promise<boolean | ApiError> {
  const rows = await svc.db.all<RegenerationState>(svc.db.select(REGENERATION_STATE).from(users).where(eq(users.id, userId)));
  const before = rows[0];
  if (!before?.totp_secret) return totpNotEnabled();
  let resolved: MfaCode;
  try {
    resolved = await resolveMfaCode(svc.config.dataKey, userId, before, code);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  if (!resolved) return false;

  const generation = randomToken();
  const won = sql`EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND recovery_codes_generation = ${generation})`;
  const [claimed, , , , after] = await batchRows<[{ id: number }, never, never, never, RegenerationState]>(svc.db, [
    // Raw (this and the next three): compare-and-set on the generation seen; the spend and the
    // replacement run only where this request's claim won, the new codes from one json_each.
    sql`UPDATE users SET recovery_codes_generation = ${generation}
      WHERE id = ${userId} AND totp_secret = ${before.totp_secret} AND recovery_codes_generation IS ${seen}
        AND ${spendableCondition(userId, resolved)}
      RETURNING id`,
    spendStatement(userId, resolved, won),
    sql`DELETE FROM recovery_codes WHERE user_id = ${userId} AND ${won}`,
    sql`INSERT INTO recovery_codes (user_id, code_hash) SELECT ${userId}, value FROM json_each(${JSON.stringify(hashes)}) WHERE ${won}`,
    svc.db.select(REGENERATION_STATE).from(users).where(eq(users.id, userId)),
  ]);
  if (claimed.length === 1) return true;
  // Lost: tell a concurrent change (TOTP turned off or re-enrolled, another regeneration) from a
  // code that was not, or no longer, spendable (a replayed step, a used or unknown recovery code).
  const now = after[0];
  if (now?.totp_secret !== before.totp_secret) return totpNotEnabled();
  if (now.recovery_codes_generation !== seen) return recoveryCodesChanged();
  return false;
}

/**
 * Replaces the recovery codes (the old ones stop working) after a code step-up; returns the new
 * ones. The code is spent in the batch that replaces the codes, as a compare-and-set: of two
 * concurrent regenerations one wins and the other is 409 `RECOVERY_CODES_CHANGED`, so the codes
 * shown are always the ones that work.
 */
export async function regenerateRecoveryCodes(svc: Services, user: SessionUser, code: string): Promise<string[]> {
  if (!user.totpEnabled) throw totpNotEnabled();
  const codes = freshRecoveryCodes();
  await assertStepUp(
    svc,
    user,
    { mfaCode: code },
    {
      operation: "Regenerating recovery codes",
      password: false,
      spendCode: (given) => spendAndReplace(svc, user.id, user.recoveryCodesGeneration, given, codes.hashes),
    },
  );
  audit(svc.log, "auth.mfa.recovery_codes_regenerated", { user_id: user.id });
  return codes.shown;
}
