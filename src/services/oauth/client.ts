import type { OAuthProvider, OAuthProviderConfig } from "../../auth/oauth-config";
import type { Services } from "../../container";

/**
 * The error codes a callback reports in its fragment (`#status=error&error=<code>`), documented in
 * docs/oauth.md. Thrown as `OAuthFailure` anywhere in a callback.
 */
export type OAuthErrorCode =
  | "access_denied"
  | "invalid_request"
  | "invalid_state"
  | "provider_error"
  | "provider_unavailable"
  | "email_not_verified"
  | "email_unavailable"
  | "account_exists"
  | "account_inactive"
  | "session_revoked"
  | "already_linked"
  | "link_exists"
  | "server_error";

export class OAuthFailure extends Error {
  override name = "OAuthFailure";
  constructor(
    readonly code: OAuthErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** The provider's grant: tokens as the provider gave them (sealed before storage by the caller). */
export interface ProviderTokens {
  accessToken: string;
  refreshToken: string | null;
  /** Unix seconds, or null when the provider gives no lifetime (GitHub). */
  expiresAt: number | null;
}

/** Who the provider says signed in. */
export interface ProviderProfile {
  accountId: string;
  email: string | null;
  emailVerified: boolean;
}

// GitHub's API refuses requests without a User-Agent.
const USER_AGENT = "relab-api";

/** The URL the browser is sent to: the provider's consent screen, with PKCE (S256) and the sealed state. */
export function authorizationUrl(
  provider: OAuthProvider,
  config: OAuthProviderConfig,
  callbackUrl: string,
  state: string,
  challenge: string,
): string {
  const url = new URL(config.authorizeUrl);
  const params: Record<string, string> = {
    client_id: config.clientId,
    redirect_uri: callbackUrl,
    response_type: "code",
    scope: config.scopes.join(" "),
    state,
    code_challenge: challenge,
    code_challenge_method: "S256",
  };
  // The video association needs a refresh token: streams are started long after the link.
  if (provider === "google-youtube") Object.assign(params, { access_type: "offline", prompt: "consent" });
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.toString();
}

async function call(svc: Pick<Services, "outbound">, url: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await svc.outbound(url, { ...init, headers: { "User-Agent": USER_AGENT, Accept: "application/json", ...init.headers } });
  } catch (error) {
    throw new OAuthFailure("provider_unavailable", `provider request failed: ${(error as Error).message}`);
  }
  if (response.status >= 500 || response.status === 429) {
    throw new OAuthFailure("provider_unavailable", `provider answered ${response.status}`);
  }
  return response;
}

async function json(response: Response): Promise<Record<string, unknown>> {
  try {
    const body = (await response.json()) as unknown;
    if (typeof body === "object" && body !== null) return body as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new OAuthFailure("provider_error", "provider answer was not JSON");
}

/** Exchanges the authorization code (with the PKCE verifier) for the provider's tokens. */
export async function exchangeCode(
  svc: Pick<Services, "outbound" | "clock">,
  config: OAuthProviderConfig,
  code: string,
  verifier: string,
  callbackUrl: string,
): Promise<ProviderTokens> {
  const response = await call(svc, config.tokenUrl, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: callbackUrl,
      client_id: config.clientId,
      client_secret: config.clientSecret,
      code_verifier: verifier,
    }),
  });
  const body = await json(response);
  // GitHub reports refusals as 200 with an `error` member; Google with a 4xx.
  if (!response.ok || typeof body.error === "string" || typeof body.access_token !== "string") {
    throw new OAuthFailure("provider_error", `code exchange refused: ${typeof body.error === "string" ? body.error : response.status}`);
  }
  const expiresIn = typeof body.expires_in === "number" ? body.expires_in : null;
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === "string" ? body.refresh_token : null,
    expiresAt: expiresIn === null ? null : Math.floor(svc.clock.now() / 1000) + expiresIn,
  };
}

/** The account the tokens belong to: Google's userinfo, or GitHub's user and its verified primary address. */
export async function fetchProfile(
  svc: Pick<Services, "outbound">,
  provider: OAuthProvider,
  config: OAuthProviderConfig,
  accessToken: string,
): Promise<ProviderProfile> {
  const auth = { Authorization: `Bearer ${accessToken}` };
  const response = await call(svc, config.profileUrl, { headers: auth });
  if (!response.ok) throw new OAuthFailure("provider_error", `profile refused: ${response.status}`);
  const body = await json(response);
  if (provider !== "github") {
    if (typeof body.sub !== "string" || body.sub === "") throw new OAuthFailure("provider_error", "userinfo has no sub");
    return { accountId: body.sub, email: typeof body.email === "string" ? body.email : null, emailVerified: body.email_verified === true };
  }
  if (typeof body.id !== "number" && typeof body.id !== "string") throw new OAuthFailure("provider_error", "GitHub user has no id");
  const emails = await call(svc, config.emailsUrl!, { headers: auth });
  const list = emails.ok
    ? ((await emails.json().catch(() => [])) as Array<{ email?: unknown; primary?: unknown; verified?: unknown }>)
    : [];
  const primary = Array.isArray(list) ? list.find((entry) => entry.primary === true && typeof entry.email === "string") : undefined;
  return {
    accountId: String(body.id),
    email: primary ? (primary.email as string) : typeof body.email === "string" ? body.email : null,
    emailVerified: primary?.verified === true,
  };
}

/**
 * Asks the provider to revoke the grant behind `tokens` (account deletion, unlinking). Google
 * revokes by token (the refresh token ends the whole grant); GitHub deletes the app's grant with
 * the client's credentials. Returns whether the provider confirmed.
 */
export async function revokeGrant(
  svc: Pick<Services, "outbound">,
  provider: OAuthProvider,
  config: OAuthProviderConfig,
  tokens: { accessToken: string | null; refreshToken: string | null },
): Promise<boolean> {
  const token = tokens.refreshToken ?? tokens.accessToken;
  if (!token) return false;
  const response =
    provider === "github"
      ? await call(svc, config.revokeUrl, {
          method: "DELETE",
          headers: { Authorization: `Basic ${btoa(`${config.clientId}:${config.clientSecret}`)}`, "Content-Type": "application/json" },
          body: JSON.stringify({ access_token: token }),
        })
      : await call(svc, config.revokeUrl, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ token }),
        });
  return response.ok;
}
