import { and, eq, isNotNull, sql } from "drizzle-orm";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { users } from "../../db/schema";
import { audit } from "../../lib/audit";
import { ApiError } from "../../lib/problem";
import { toSessionUser, USER_FIELDS, type UserRow } from "../sign-in/sessions";

/**
 * The contributor terms: only the contributions of accounts that accepted them go into dataset
 * releases (decisions.md, Contributor terms). Accepting names the current version
 * (`CONTRIBUTOR_TERMS_VERSION`); withdrawing excludes the account from releases made after it,
 * and changes no published one.
 */

/**
 * Records that `user` accepts version `version` of the terms, which must be the current one
 * (otherwise 422 at `/version`). Accepting the version already accepted keeps its first time.
 * One round trip.
 */
export async function acceptContributorTerms(
  svc: Pick<Services, "db" | "config" | "log">,
  user: SessionUser,
  version: number,
): Promise<SessionUser> {
  const current = svc.config.contributorTermsVersion;
  if (version !== current) {
    throw new ApiError(422, {
      code: "VALIDATION_FAILED",
      detail: "The request did not pass validation.",
      errors: [{ pointer: "/version", detail: `The current contributor terms are version ${current}; accept that version.` }],
    });
  }
  const rows = await svc.db.all<UserRow>(
    svc.db
      .update(users)
      .set({
        terms_accepted_at: sql`CASE WHEN ${users.terms_accepted_version} = ${version} THEN ${users.terms_accepted_at} ELSE unixepoch() END`,
        terms_accepted_version: version,
        updated_at: sql`unixepoch()`,
      })
      .where(and(eq(users.id, user.id), eq(users.is_active, true)))
      .returning(USER_FIELDS),
  );
  const row = rows[0];
  if (!row) throw new ApiError(404, { code: "USER_NOT_FOUND", detail: "This account no longer exists." });
  if (user.termsAcceptedVersion !== version)
    audit(svc.log, "account.contributor_terms.accepted", { user_id: user.id, terms_version: version });
  return toSessionUser(row);
}

/** Withdraws the acceptance (both fields become null); one round trip. */
export async function withdrawContributorTerms(svc: Pick<Services, "db" | "log">, user: SessionUser): Promise<void> {
  await svc.db.run(
    svc.db
      .update(users)
      .set({ terms_accepted_version: null, terms_accepted_at: null, updated_at: sql`unixepoch()` })
      .where(and(eq(users.id, user.id), isNotNull(users.terms_accepted_version))),
  );
  if (user.termsAcceptedVersion !== null) audit(svc.log, "account.contributor_terms.withdrawn", { user_id: user.id });
}
