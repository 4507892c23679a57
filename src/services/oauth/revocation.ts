import { and, eq, inArray, sql } from "drizzle-orm";
import type { OAuthProvider } from "../../auth/oauth-config";
import type { Services } from "../../container";
import { oauthAccounts } from "../../db/schema";
import { openFieldText } from "../../lib/data-encryption";
import { type RemovedLink, tokenContext } from "./accounts";
import { revokeGrant } from "./client";

/**
 * Asks the provider to revoke a removed link's grant (unlinking, account deletion). Best effort:
 * the link is already gone here, so a provider that is down only leaves a grant the user can
 * revoke in the provider's settings; the outcome is logged, never the tokens.
 */
export async function revokeLink(svc: Pick<Services, "config" | "log" | "db" | "outbound">, link: RemovedLink): Promise<void> {
  const config = svc.config.oauth.providers[link.provider as OAuthProvider];
  if (!config) return;
  if (link.provider !== "github") {
    // Sign-in and the video link share one Google client, and Google revokes every scope the
    // person gave that client at once: keep the grant while the other link still needs it.
    const siblings = await svc.db.all(
      svc.db
        .select({ one: sql`1` })
        .from(oauthAccounts)
        .where(and(eq(oauthAccounts.account_id, link.accountId), inArray(oauthAccounts.provider, ["google", "google-youtube"]))),
    );
    if (siblings.length > 0) {
      svc.log.info("oauth grant kept for the other Google link", { provider: link.provider });
      return;
    }
  }
  const context = tokenContext(link.provider, link.accountId);
  try {
    const open = (value: string | null) => (value === null ? Promise.resolve(null) : openFieldText(svc.config.dataKey, value, context));
    const [accessToken, refreshToken] = await Promise.all([open(link.accessTokenSealed), open(link.refreshTokenSealed)]);
    const revoked = await revokeGrant(svc, link.provider, config, { accessToken, refreshToken });
    svc.log.info("oauth grant revocation", { provider: link.provider, revoked });
  } catch (error) {
    svc.log.warn("oauth grant not revoked", { provider: link.provider, error: (error as Error).message });
  }
}
