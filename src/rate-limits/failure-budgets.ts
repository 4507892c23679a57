import type { Services } from "../container";
import { loginIdentifier } from "../lib/email-address";
import { enforceLimits, subjects } from "./client";
import { type LimitName, WRONG_SECRET_BUDGET } from "./policy";

/** One unit taken from a failure budget for an attempt whose secret is about to be checked. */
export interface FailureReservation {
  /** The secret was right: the attempt does not count. */
  refund(): Promise<void>;
}

type BudgetServices = Pick<Services, "limiter" | "log" | "config">;

/**
 * Reserves the failure before the secret is checked and refunds it on success, rather than
 * counting failures afterwards: concurrent guesses then cannot all pass a check of the old count.
 * A spent budget is 429 and the secret is not checked; the store being unreachable is 503 (these
 * budgets fail closed).
 */
async function reserve(
  svc: BudgetServices,
  subject: string,
  names: readonly LimitName[],
  userId: number | null,
): Promise<FailureReservation> {
  const decision = await enforceLimits(svc, subject, names, { userId });
  return {
    async refund() {
      if (!decision) return;
      try {
        await svc.limiter.refund(subject, decision.counters);
      } catch (error) {
        // The sign-in itself succeeded; the cost is one unit of budget until the window ends.
        svc.log.warn("failure budget refund failed", { limits: names.join(","), error });
      }
    },
  };
}

/**
 * The failed-login budget, keyed by what the sign-in identifier names: the canonical email for an
 * address (so every alias of a mailbox shares one budget), the username for a username. Not by
 * the account the identifier finds: then a 429 on a username after spending an address's budget
 * would tell that the two belong together. The cost is a second budget per account (3 a minute by
 * address, 3 by username). Unknown accounts are limited exactly like known ones.
 */
export function reserveLoginFailure(svc: BudgetServices, identifier: string): Promise<FailureReservation> {
  const { kind, key } = loginIdentifier(identifier);
  return reserve(svc, subjects.email(svc.config.tokenSecret, kind === "email" ? key : `username:${key}`), ["failed-login"], null);
}

/** Wrong passwords or codes of one account at any step-up or challenge route: one shared budget, per minute and per day. */
export function reserveWrongSecret(svc: BudgetServices, userId: number): Promise<FailureReservation> {
  return reserve(svc, subjects.user(userId), WRONG_SECRET_BUDGET, userId);
}
