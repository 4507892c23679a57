import { verifyPassword } from "../../auth/password";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { audit } from "../../lib/audit";
import { ApiError } from "../../lib/problem";
import { reserveWrongSecret } from "../../rate-limits/failure-budgets";
import { spendMfaCode } from "./mfa-codes";

/** Seconds within which a sign-in counts as recent for a step-up without a password or TOTP. */
export const RECENT_SIGN_IN_SECONDS = 10 * 60;

/** What a step-up request carries (`current_password`, `mfa_code` or `code`). */
export interface StepUpCredentials {
  currentPassword?: string | undefined;
  mfaCode?: string | undefined;
}

export interface StepUpOptions {
  /** Whether the account's password is asked for (regenerating recovery codes asks only for a code). */
  password?: boolean;
  /** Whether the account's TOTP is asked for (turning TOTP on checks the new seed's code itself, in `extra`). */
  mfa?: boolean;
  /** One more secret checked under the same budget unit after the others, e.g. the first code of a new seed; false is 403 `MFA_CODE_INVALID`. */
  extra?: () => Promise<boolean>;
  /**
   * Checks and spends the TOTP or recovery code in place of `spendMfaCode`, for an operation
   * that spends it in the same batch as its own writes: true when it was right, false when wrong
   * (403); an ApiError when it could not be judged (a concurrent change won), which is thrown
   * after the budget unit is given back.
   */
  spendCode?: (code: string) => Promise<boolean | ApiError>;
  /** Names the operation in messages: "Deleting the account", say. */
  operation: string;
}

export function wrongMfaCode(): ApiError {
  return new ApiError(403, {
    code: "MFA_CODE_INVALID",
    detail: "The authenticator or recovery code is not correct, or was already used.",
  });
}

/**
 * The spec's step-up rule, one piece for every operation that needs it: the current password when
 * the account has one; with TOTP also a code (authenticator or recovery code; a recovery code is
 * spent); with neither, a sign-in within the last 10 minutes, that of the request's own session.
 * A missing credential is 400 and costs nothing; a wrong one is 403 (never 401: the session is
 * fine, and a client must not refresh and resend the guess). Each attempt that checks a secret
 * takes one unit of the account's wrong-secret budget (3 a minute, 100 a day, shared with the
 * login challenge), given back when everything was right; past the budget, 429 before anything
 * is checked.
 */
export async function assertStepUp(svc: Services, user: SessionUser, given: StepUpCredentials, options: StepUpOptions): Promise<void> {
  const needPassword = options.password !== false && user.hashedPassword !== null;
  const needCode = options.mfa !== false && user.totpEnabled;
  if (needPassword && given.currentPassword === undefined) {
    throw new ApiError(400, { code: "CURRENT_PASSWORD_REQUIRED", detail: `${options.operation} needs \`current_password\`.` });
  }
  if (needCode && given.mfaCode === undefined) {
    throw new ApiError(400, {
      code: "MFA_CODE_REQUIRED",
      detail: `${options.operation} needs a code from your authenticator app or a recovery code.`,
    });
  }
  if (!needPassword && !needCode) {
    // The sign-in of this very session: a recent sign-in elsewhere must not vouch for an old,
    // possibly stolen, session.
    const startedAt = user.sessionStartedAt ?? null;
    const recent = startedAt !== null && svc.clock.now() / 1000 - startedAt <= RECENT_SIGN_IN_SECONDS;
    if (!recent) {
      throw new ApiError(403, {
        code: "RECENT_SIGN_IN_REQUIRED",
        detail: `${options.operation} needs a sign-in within the last 10 minutes: sign in again, then retry.`,
      });
    }
    if (!options.extra) return;
  }

  const reservation = await reserveWrongSecret(svc, user.id);
  const refuse = (error: ApiError, reason: string): never => {
    audit(svc.log, "auth.step_up.failed", { user_id: user.id, reason });
    throw error;
  };
  if (needPassword && !verifyPassword(given.currentPassword!, user.hashedPassword!)) {
    refuse(new ApiError(403, { code: "CURRENT_PASSWORD_INVALID", detail: "The current password is not correct." }), "wrong_password");
  }
  if (needCode) {
    const spent = options.spendCode
      ? await options.spendCode(given.mfaCode!)
      : await spendMfaCode(svc, svc.config.dataKey, user.id, given.mfaCode!);
    if (spent instanceof ApiError) {
      await reservation.refund();
      throw spent;
    }
    if (!spent) refuse(wrongMfaCode(), "wrong_code");
  }
  if (options.extra && !(await options.extra())) refuse(wrongMfaCode(), "wrong_code");
  await reservation.refund();
}
