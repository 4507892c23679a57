import { lte, sql } from "drizzle-orm";
import { pkceChallenge } from "../../auth/oauth-state";
import type { SessionUser } from "../../auth/session-user";
import { fingerprint, randomToken } from "../../auth/tokens";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { oauthHandoffs } from "../../db/schema";
import { openFieldText, sealField } from "../../lib/data-encryption";
import { ApiError } from "../../lib/problem";

/** How long a callback's hand-off can be claimed (decisions.md: OAuth MFA handoff 2 minutes). */
export const HANDOFF_TTL_SECONDS = 120;

export type HandoffKind = "mfa" | "login";

const context = (handoffFingerprint: string) => `oauth-handoff:${handoffFingerprint}`;

/**
 * A one-time hand-off for the app, carried in the redirect's fragment instead of any token: `mfa`
 * keeps the MFA challenge token sealed, `login` names the account whose bearer session the claim
 * starts. Stored as a fingerprint; voided by any revocation of the account before the claim.
 */
export async function createHandoff(
  svc: Pick<Services, "db" | "config">,
  kind: HandoffKind,
  user: SessionUser,
  secret: string | null,
  appChallenge: string | null,
): Promise<string> {
  const handoff = randomToken();
  const id = fingerprint(handoff);
  const sealedSecret = secret === null ? null : await sealField(svc.config.dataKey, secret, context(id));
  await batchRows(svc.db, [
    svc.db.delete(oauthHandoffs).where(lte(oauthHandoffs.expires_at, sql`unixepoch()`)),
    svc.db.insert(oauthHandoffs).values({
      fingerprint: id,
      kind,
      user_id: user.id,
      secret_sealed: sealedSecret,
      tokens_valid_after: user.tokensValidAfter,
      expires_at: sql`unixepoch() + ${HANDOFF_TTL_SECONDS}`,
      app_challenge: appChallenge,
    }),
  ]);
  return handoff;
}

export function handoffInvalid(): ApiError {
  return new ApiError(400, {
    code: "OAUTH_HANDOFF_INVALID",
    detail: "The hand-off is unknown, expired (2 minutes) or already claimed; sign in again.",
  });
}

/**
 * Claims a hand-off: one conditional DELETE, so of two claims exactly one gets it. Unknown,
 * expired, already claimed, of the other kind, of an account revoked or deactivated since, or
 * (token flow) without the verifier of the app's PKCE challenge: 400, and a wrong verifier leaves
 * the hand-off to its app.
 */
export async function claimHandoff(
  svc: Pick<Services, "db" | "config">,
  kind: HandoffKind,
  handoff: string,
  verifier: string | undefined,
): Promise<{ userId: number; secret: string | null }> {
  const id = fingerprint(handoff);
  const presented = verifier === undefined ? null : await pkceChallenge(verifier);
  const rows = await svc.db.all<{ user_id: number; secret_sealed: string | null }>(
    // Raw: the claim is the DELETE's own condition (kind, expiry, PKCE verifier, the account's epoch), so one of two claims wins.
    sql`DELETE FROM oauth_handoffs WHERE fingerprint = ${id} AND kind = ${kind} AND expires_at > unixepoch()
          AND (app_challenge IS NULL OR app_challenge = ${presented})
          AND tokens_valid_after = (SELECT tokens_valid_after FROM users WHERE id = oauth_handoffs.user_id AND is_active = 1)
        RETURNING user_id, secret_sealed`,
  );
  const row = rows[0];
  if (!row) throw handoffInvalid();
  return {
    userId: row.user_id,
    secret: row.secret_sealed === null ? null : await openFieldText(svc.config.dataKey, row.secret_sealed, context(id)),
  };
}
