import { and, asc, count, eq, lte, type SQL, sql } from "drizzle-orm";
import { usernameViolation } from "../../auth/account-names";
import type { OAuthProvider } from "../../auth/oauth-config";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { constraintFailure, isConstraintFailure } from "../../db/constraint-errors";
import { oauthAccounts, oauthStateUses, users } from "../../db/schema";
import { audit } from "../../lib/audit";
import { sealField } from "../../lib/data-encryption";
import { canonicalEmail, normalizeEmail } from "../../lib/email-address";
import { toSessionUser, USER_FIELDS, type UserRow } from "../sign-in/sessions";
import { OAuthFailure, type ProviderProfile, type ProviderTokens } from "./client";

/** The sealing context of a link's provider tokens: they open only for this provider account. */
export const tokenContext = (provider: OAuthProvider, accountId: string) => `oauth:${provider}:${accountId}`;

async function sealed(svc: Pick<Services, "config">, provider: OAuthProvider, accountId: string, tokens: ProviderTokens) {
  const key = svc.config.dataKey;
  const context = tokenContext(provider, accountId);
  return {
    access: await sealField(key, tokens.accessToken, context),
    refresh: tokens.refreshToken === null ? null : await sealField(key, tokens.refreshToken, context),
  };
}

/** The statement that writes (or refreshes) the link of the account `userId` selects to the provider account, with its sealed tokens. */
async function linkStatement(
  svc: Pick<Services, "config">,
  userId: SQL,
  provider: OAuthProvider,
  profile: ProviderProfile,
  tokens: ProviderTokens,
  guard: SQL = sql`true`,
): Promise<SQL> {
  const seal = await sealed(svc, provider, profile.accountId, tokens);
  // Raw: INSERT … SELECT under `guard`, and the upsert refreshes only a link to the same provider account (its own condition).
  return sql`INSERT INTO oauth_accounts (user_id, provider, account_id, account_email, access_token_sealed, refresh_token_sealed, access_token_expires_at)
        SELECT ${userId}, ${provider}, ${profile.accountId}, ${profile.email}, ${seal.access}, ${seal.refresh}, ${tokens.expiresAt}
        WHERE ${guard}
        ON CONFLICT (user_id, provider) DO UPDATE SET account_email = excluded.account_email,
          access_token_sealed = excluded.access_token_sealed,
          refresh_token_sealed = coalesce(excluded.refresh_token_sealed, oauth_accounts.refresh_token_sealed),
          access_token_expires_at = excluded.access_token_expires_at, updated_at = unixepoch()
        WHERE oauth_accounts.account_id = excluded.account_id
        RETURNING id`;
}

/**
 * Writes or refreshes a link. An account already linked to ANOTHER account of this provider keeps
 * that link (`link_exists`): replacing it silently would strand the old grant; unlink first.
 */
async function upsertLink(
  svc: Pick<Services, "db" | "config">,
  userId: number,
  provider: OAuthProvider,
  profile: ProviderProfile,
  tokens: ProviderTokens,
): Promise<void> {
  const rows = await svc.db.all(await linkStatement(svc, sql`${userId}`, provider, profile, tokens));
  if (rows.length === 0) throw new OAuthFailure("link_exists", "the account already has another account of this provider linked");
}

const linkedElsewhere = (error: unknown) => isConstraintFailure(error, "UNIQUE", "oauth_accounts.provider");

/** A free username from the provider's login or the address: lower-case, `[a-z0-9_]`, with a random suffix when taken. */
async function freeUsername(svc: Pick<Services, "db">, hint: string): Promise<string> {
  let base = hint
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 40);
  if (base.length < 2 || usernameViolation(base)) base = `user_${base}`.slice(0, 40);
  for (let attempt = 0; attempt < 5; attempt++) {
    const candidate = attempt === 0 ? base : `${base}_${crypto.getRandomValues(new Uint32Array(1))[0]! % 100_000}`;
    const taken = await svc.db.all(svc.db.select({ taken: sql`1` }).from(users).where(eq(users.username, candidate)));
    if (taken.length === 0 && !usernameViolation(candidate)) return candidate;
  }
  return `user_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
}

/**
 * The account a provider sign-in speaks for (decisions.md, Authentication details):
 * 1. the account already linked to this provider account;
 * 2. Google only: the verified account with exactly this address, when Google says the address
 *    is verified too (an unverified account could be someone else's squat: `account_exists`);
 * 3. otherwise a new account without a password, verified when the provider says the address is.
 * GitHub never links by address: an account holding it must sign in and link GitHub explicitly
 * (`account_exists`). The link's tokens are sealed and stored.
 */
export async function signInAccount(
  svc: Services,
  provider: "google" | "github",
  profile: ProviderProfile,
  tokens: ProviderTokens,
  username: string | null,
  attempt = 1,
): Promise<SessionUser> {
  const link = svc.db
    .select({ user_id: oauthAccounts.user_id })
    .from(oauthAccounts)
    .where(and(eq(oauthAccounts.provider, provider), eq(oauthAccounts.account_id, profile.accountId)));
  const linked = await svc.db.all<UserRow>(svc.db.select(USER_FIELDS).from(users).where(eq(users.id, link)));
  if (linked[0]) {
    const user = toSessionUser(linked[0]);
    if (!user.isActive) throw new OAuthFailure("account_inactive", "the linked account is inactive");
    await upsertLink(svc, user.id, provider, profile, tokens);
    return user;
  }
  if (!profile.email) throw new OAuthFailure("email_unavailable", "the provider gave no email address");
  const email = normalizeEmail(profile.email);
  // Linking by address needs the very address: a `+tag` or dotted variant shares the canonical
  // mailbox (one account per mailbox) but is not proof of owning the account's address.
  const existing = await svc.db.all<UserRow>(
    svc.db
      .select(USER_FIELDS)
      .from(users)
      .where(eq(users.email_canonical, canonicalEmail(email))),
  );
  if (existing[0]) {
    const user = toSessionUser(existing[0]);
    if (provider !== "google" || user.email !== email) {
      throw new OAuthFailure("account_exists", "an account holds this mailbox; sign in to it and link the provider");
    }
    if (!profile.emailVerified) throw new OAuthFailure("email_not_verified", "Google has not verified this address");
    // An unverified account may be someone else's squat on this address (its password, its TOTP):
    // only an account that proved the address itself is joined automatically.
    if (!user.isVerified)
      throw new OAuthFailure("account_exists", "the account holding this address is not verified; sign in to it and link Google");
    if (!user.isActive) throw new OAuthFailure("account_inactive", "the account is inactive");
    try {
      await upsertLink(svc, user.id, provider, profile, tokens);
    } catch (error) {
      if (linkedElsewhere(error)) throw new OAuthFailure("already_linked", "this Google account is linked to another account");
      throw error;
    }
    audit(svc.log, "auth.oauth.linked", { user_id: user.id, provider, by: "verified_email" });
    return user;
  }

  const name = await freeUsername(svc, username ?? email.split("@")[0]!);
  // The account and its link in one batch: never an account without a way to sign in.
  let created: UserRow[];
  try {
    [created] = await batchRows<[UserRow, unknown]>(svc.db, [
      svc.db
        .insert(users)
        .values({
          email,
          email_canonical: canonicalEmail(email),
          username: name,
          hashed_password: null,
          is_verified: profile.emailVerified,
        })
        .returning(USER_FIELDS),
      await linkStatement(svc, sql`(SELECT id FROM users WHERE email = ${email})`, provider, profile, tokens),
    ]);
  } catch (error) {
    // A concurrent first sign-in of the same person (or one that took the same username) won the
    // insert: look again once, which finds its link, its address or a free name.
    if (attempt === 1 && constraintFailure(error)?.kind === "UNIQUE") return signInAccount(svc, provider, profile, tokens, username, 2);
    throw error;
  }
  const user = toSessionUser(created[0]!);
  audit(svc.log, "auth.oauth.account_created", { user_id: user.id, provider, verified: profile.emailVerified });
  return user;
}

/** Links the provider account to `userId` (the associate flow); `already_linked` when another account holds it. */
/**
 * Links a provider account to the signed-in account the link began for, in one statement that
 * holds only while that account is active and its revocation epoch is still `tokensValidAfter`
 * (a sign-out everywhere since voids the link). A failed link reads the account once more to say
 * why: `account_inactive`, `session_revoked` or `link_exists`.
 */
export async function associateAccount(
  svc: Services,
  linking: { userId: number; tokensValidAfter: number | null },
  provider: OAuthProvider,
  profile: ProviderProfile,
  tokens: ProviderTokens,
): Promise<void> {
  const { userId, tokensValidAfter } = linking;
  const guard = sql`EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND is_active = 1 AND tokens_valid_after = ${tokensValidAfter})`;
  let rows: unknown[];
  try {
    rows = await svc.db.all(await linkStatement(svc, sql`${userId}`, provider, profile, tokens, guard));
  } catch (error) {
    if (linkedElsewhere(error)) throw new OAuthFailure("already_linked", "this provider account is linked to another account");
    throw error;
  }
  if (rows.length === 0) {
    const found = await svc.db.all<{ is_active: number; tokens_valid_after: number }>(
      svc.db.select({ is_active: users.is_active, tokens_valid_after: users.tokens_valid_after }).from(users).where(eq(users.id, userId)),
    );
    const user = found[0];
    if (!user || user.is_active !== 1) throw new OAuthFailure("account_inactive", "the account to link is gone or inactive");
    if (user.tokens_valid_after !== tokensValidAfter)
      throw new OAuthFailure("session_revoked", "the account's sessions were revoked since the link began");
    throw new OAuthFailure("link_exists", "the account already has another account of this provider linked");
  }
  audit(svc.log, "auth.oauth.linked", { user_id: userId, provider, by: "association" });
}

/** A removed link's sealed tokens, for revoking the grant. */
export interface RemovedLink {
  provider: OAuthProvider;
  accountId: string;
  accessTokenSealed: string | null;
  refreshTokenSealed: string | null;
}

/**
 * Unlinks a provider from the account. Refused (409 `LAST_SIGN_IN_METHOD`) when it is the account's
 * last way to sign in: no password and no other sign-in provider (the video association is not a
 * sign-in). The check is part of the DELETE, so two unlinks racing cannot strand the account.
 */
export async function unlinkAccount(
  svc: Pick<Services, "db">,
  userId: number,
  provider: OAuthProvider,
): Promise<RemovedLink | "not_linked" | "last_method"> {
  const [removed, remaining] = await batchRows<
    [{ account_id: string; access_token_sealed: string | null; refresh_token_sealed: string | null }, { n: number }]
  >(svc.db, [
    // Raw: the last-sign-in-method check is the DELETE's own condition.
    sql`DELETE FROM oauth_accounts WHERE user_id = ${userId} AND provider = ${provider}
          AND (provider = 'google-youtube'
            OR EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND hashed_password IS NOT NULL)
            OR EXISTS (SELECT 1 FROM oauth_accounts o WHERE o.user_id = ${userId} AND o.provider IN ('google', 'github') AND o.provider <> ${provider}))
        RETURNING account_id, access_token_sealed, refresh_token_sealed`,
    svc.db
      .select({ n: count().as("n") })
      .from(oauthAccounts)
      .where(and(eq(oauthAccounts.user_id, userId), eq(oauthAccounts.provider, provider))),
  ]);
  if (removed[0]) {
    return {
      provider,
      accountId: removed[0].account_id,
      accessTokenSealed: removed[0].access_token_sealed,
      refreshTokenSealed: removed[0].refresh_token_sealed,
    };
  }
  return (remaining[0]?.n ?? 0) > 0 ? "last_method" : "not_linked";
}

/** The account's links, for the account page. */
export async function listLinks(svc: Pick<Services, "db">, userId: number) {
  return svc.db.all<{ provider: OAuthProvider; account_email: string | null; created_at: number }>(
    svc.db
      .select({ provider: oauthAccounts.provider, account_email: oauthAccounts.account_email, created_at: oauthAccounts.created_at })
      .from(oauthAccounts)
      .where(eq(oauthAccounts.user_id, userId))
      .orderBy(asc(oauthAccounts.provider)),
  );
}

/** Marks a state's nonce used; false when it was used before (a replayed callback). */
export async function spendStateNonce(svc: Pick<Services, "db">, nonce: string, expiresAt: number): Promise<boolean> {
  const [, inserted] = await batchRows<[unknown, { nonce: string }]>(svc.db, [
    svc.db.delete(oauthStateUses).where(lte(oauthStateUses.expires_at, sql`unixepoch()`)),
    svc.db.insert(oauthStateUses).values({ nonce, expires_at: expiresAt }).onConflictDoNothing().returning({ nonce: oauthStateUses.nonce }),
  ]);
  return inserted.length === 1;
}
