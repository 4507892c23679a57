import { sql } from "drizzle-orm";
import { base32Encode, matchTotp, newRecoveryCodes, newTotpSecret, normalizeRecoveryCode, otpauthUri, recoveryCodeHash } from "../auth/totp";
import { fromBase64Url, toBase64Url } from "../lib/encoding";
import { batchRows } from "../db/client";
import { audit } from "../lib/audit";
import { openFieldText, sealField } from "../lib/data-encryption";
import { ApiError } from "../lib/problem";
import type { ServiceDeps } from "./deps";
import { totpContext } from "./mfa-codes";
import { revocationStatements, type SessionGrant, type SessionUser, sessionStatements } from "./sessions";
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
export async function beginTotpSetup(deps: Pick<ServiceDeps, "config">, user: SessionUser): Promise<TotpSetup> {
  if (user.totpEnabled) throw alreadyEnabled();
  const seed = newTotpSecret();
  const expiresAt = Math.floor(Date.now() / 1000) + TOTP_SETUP_TTL_SECONDS;
  const payload = JSON.stringify({ seed: toBase64Url(seed), exp: expiresAt });
  return {
    setupToken: await sealField(deps.config.dataKey, payload, setupContext(user.id)),
    secret: base32Encode(seed),
    otpauthUri: otpauthUri({ secret: seed, issuer: ISSUER, account: user.email }),
  };
}

async function openSetupToken(dataKey: Uint8Array, userId: number, token: string): Promise<Uint8Array> {
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
  deps: ServiceDeps,
  user: SessionUser,
  input: { setupToken: string; code: string; currentPassword?: string | undefined },
): Promise<TotpConfirmation> {
  if (user.totpEnabled) throw alreadyEnabled();
  const seed = await openSetupToken(deps.config.dataKey, user.id, input.setupToken);
  let step: number | null = null;
  await assertStepUp(deps, user, { currentPassword: input.currentPassword }, {
    operation: "Turning on two-step verification",
    mfa: false,
    extra: async () => (step = matchTotp(seed, input.code, Date.now() / 1000, null)) !== null,
  });

  const sealed = await sealField(deps.config.dataKey, seed, totpContext(user.id));
  // The sealed value is unique (random IV): the rest of the batch runs only if this request stored it.
  const stored = sql`EXISTS (SELECT 1 FROM users WHERE id = ${user.id} AND totp_secret = ${sealed})`;
  const codes = freshRecoveryCodes();
  const session = sessionStatements(deps.config.tokenSecret, user.id, sql`id = ${user.id} AND is_active = 1 AND totp_secret = ${sealed}`, {
    recordLogin: false,
    // The enrolling device's new session continues its old one: no one signed in just now.
    continuing: user.sessionStartedAt ?? null,
  });
  const results = await batchRows<unknown[]>(deps.db, [
    sql`UPDATE users SET totp_secret = ${sealed}, totp_enabled_at = unixepoch(), totp_last_step = ${step}, updated_at = unixepoch()
      WHERE id = ${user.id} AND is_active = 1 AND totp_secret IS NULL`,
    sql`DELETE FROM recovery_codes WHERE user_id = ${user.id} AND ${stored}`,
    sql`INSERT INTO recovery_codes (user_id, code_hash) SELECT ${user.id}, value FROM json_each(${JSON.stringify(codes.hashes)}) WHERE ${stored}`,
    ...revocationStatements(user.id, stored),
    ...session.statements,
  ]);
  const grant = session.grant(results[results.length - 1]!);
  if (!grant) throw alreadyEnabled();
  audit(deps.log, "auth.mfa.enabled", { user_id: user.id });
  audit(deps.log, "auth.sessions.revoked", { user_id: user.id, reason: "totp_enabled" });
  return { recoveryCodes: codes.shown, grant };
}

/** The statements that remove a user's TOTP enrolment: seed, replay marker, recovery codes, pending challenges. */
export function totpRemovalStatements(userId: number) {
  return [
    sql`UPDATE users SET totp_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL, updated_at = unixepoch() WHERE id = ${userId}`,
    sql`DELETE FROM recovery_codes WHERE user_id = ${userId}`,
    sql`DELETE FROM mfa_challenges WHERE user_id = ${userId}`,
  ] as const;
}

/** Turns TOTP off after the step-up (password when the account has one, and a code). */
export async function disableTotp(
  deps: ServiceDeps,
  user: SessionUser,
  input: { code: string; currentPassword?: string | undefined },
): Promise<void> {
  if (!user.totpEnabled) throw totpNotEnabled();
  await assertStepUp(deps, user, { currentPassword: input.currentPassword, mfaCode: input.code }, {
    operation: "Turning off two-step verification",
  });
  await batchRows(deps.db, [...totpRemovalStatements(user.id)]);
  audit(deps.log, "auth.mfa.disabled", { user_id: user.id });
}

/** Replaces the recovery codes (the old ones stop working) after a code step-up; returns the new ones. */
export async function regenerateRecoveryCodes(deps: ServiceDeps, user: SessionUser, code: string): Promise<string[]> {
  if (!user.totpEnabled) throw totpNotEnabled();
  await assertStepUp(deps, user, { mfaCode: code }, { operation: "Regenerating recovery codes", password: false });
  const codes = freshRecoveryCodes();
  const enrolled = sql`EXISTS (SELECT 1 FROM users WHERE id = ${user.id} AND totp_secret IS NOT NULL)`;
  await batchRows(deps.db, [
    sql`DELETE FROM recovery_codes WHERE user_id = ${user.id}`,
    sql`INSERT INTO recovery_codes (user_id, code_hash) SELECT ${user.id}, value FROM json_each(${JSON.stringify(codes.hashes)}) WHERE ${enrolled}`,
  ]);
  audit(deps.log, "auth.mfa.recovery_codes_regenerated", { user_id: user.id });
  return codes.shown;
}
