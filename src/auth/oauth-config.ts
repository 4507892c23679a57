/** A sign-in provider (Google, GitHub) or the video-platform association (`google-youtube`). */
export type OAuthProvider = "google" | "github" | "google-youtube";
/** What a callback does: start a browser session, start a bearer session (via a hand-off), or link. */
export type OAuthFlow = "session" | "token" | "associate";

/** Endpoints and client of one provider; every endpoint the service calls joins the outbound allow-list. */
export interface OAuthProviderConfig {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** Google: the OpenID Connect userinfo endpoint; GitHub: `/user`. */
  profileUrl: string;
  /** GitHub only: `/user/emails`, for the verified primary address. */
  emailsUrl: string | null;
  revokeUrl: string;
  scopes: readonly string[];
}

export interface OAuthConfig {
  /** Providers with a client configured; the others answer 404 `OAUTH_PROVIDER_NOT_CONFIGURED`. */
  providers: Partial<Record<OAuthProvider, OAuthProviderConfig>>;
  /** `OAUTH_TOKEN_FLOW_ENABLED`: the bearer-token callbacks for apps and scripts. */
  tokenFlowEnabled: boolean;
  /** Redirect targets, normalised `scheme://host/path`: the app's `/login` and `/account`, and `<scheme>://login|account`. */
  redirectTargets: ReadonlySet<string>;
  /** `NATIVE_APP_SCHEME`, or null. */
  nativeScheme: string | null;
}

// Google's public endpoints (OpenID Connect discovery), GitHub's OAuth app endpoints.
const GOOGLE = {
  authorizeUrl: "https://accounts.google.com/o/oauth2/v2/auth",
  tokenUrl: "https://oauth2.googleapis.com/token",
  profileUrl: "https://openidconnect.googleapis.com/v1/userinfo",
  revokeUrl: "https://oauth2.googleapis.com/revoke",
};
const GITHUB = {
  authorizeUrl: "https://github.com/login/oauth/authorize",
  tokenUrl: "https://github.com/login/oauth/access_token",
  profileUrl: "https://api.github.com/user",
  emailsUrl: "https://api.github.com/user/emails",
};

/** Sign-in needs the address and the stable account id only. */
const SIGN_IN_SCOPES = { google: ["openid", "email", "profile"], github: ["read:user", "user:email"] } as const;
/** Live streaming creates broadcasts and streams on the channel: YouTube's narrowest scope that allows it. */
const VIDEO_SCOPES = ["openid", "email", "https://www.googleapis.com/auth/youtube"] as const;

const value = (text: string | undefined) => text?.trim() || null;

/**
 * The OAuth part of the configuration: a provider is on when its client id and secret are set;
 * endpoints default to the providers' own and can point elsewhere (the tests' fake provider).
 * `google-youtube` uses the Google client with the video scope.
 */
export function parseOAuthConfig(env: Env, appUrl: string): OAuthConfig {
  const providers: OAuthConfig["providers"] = {};
  const googleId = value(env.OAUTH_GOOGLE_CLIENT_ID);
  const googleSecret = value(env.OAUTH_GOOGLE_CLIENT_SECRET);
  if (googleId && googleSecret) {
    const google = {
      clientId: googleId,
      clientSecret: googleSecret,
      authorizeUrl: value(env.OAUTH_GOOGLE_AUTHORIZE_URL) ?? GOOGLE.authorizeUrl,
      tokenUrl: value(env.OAUTH_GOOGLE_TOKEN_URL) ?? GOOGLE.tokenUrl,
      profileUrl: value(env.OAUTH_GOOGLE_USERINFO_URL) ?? GOOGLE.profileUrl,
      emailsUrl: null,
      revokeUrl: value(env.OAUTH_GOOGLE_REVOKE_URL) ?? GOOGLE.revokeUrl,
    };
    providers.google = { ...google, scopes: SIGN_IN_SCOPES.google };
    providers["google-youtube"] = { ...google, scopes: VIDEO_SCOPES };
  }
  const githubId = value(env.OAUTH_GITHUB_CLIENT_ID);
  const githubSecret = value(env.OAUTH_GITHUB_CLIENT_SECRET);
  if (githubId && githubSecret) {
    providers.github = {
      clientId: githubId,
      clientSecret: githubSecret,
      authorizeUrl: value(env.OAUTH_GITHUB_AUTHORIZE_URL) ?? GITHUB.authorizeUrl,
      tokenUrl: value(env.OAUTH_GITHUB_TOKEN_URL) ?? GITHUB.tokenUrl,
      profileUrl: value(env.OAUTH_GITHUB_USER_URL) ?? GITHUB.profileUrl,
      emailsUrl: value(env.OAUTH_GITHUB_EMAILS_URL) ?? GITHUB.emailsUrl,
      revokeUrl: value(env.OAUTH_GITHUB_REVOKE_URL) ?? `https://api.github.com/applications/${encodeURIComponent(githubId)}/grant`,
      scopes: SIGN_IN_SCOPES.github,
    };
  }
  const scheme = value(env.NATIVE_APP_SCHEME);
  if (scheme !== null && !/^[a-z][a-z0-9+.-]*$/.test(scheme)) throw new Error("NATIVE_APP_SCHEME must be a URL scheme such as relab");
  const app = new URL(appUrl);
  const base = `${app.protocol}//${app.host}${app.pathname.replace(/\/+$/, "")}`;
  const redirectTargets = new Set([`${base}/login`, `${base}/account`, ...(scheme ? [`${scheme}://login`, `${scheme}://account`] : [])]);
  return { providers, tokenFlowEnabled: value(env.OAUTH_TOKEN_FLOW_ENABLED) === "true", redirectTargets, nativeScheme: scheme };
}

/** The provider endpoints the service calls (the authorize URL is the browser's, not ours). */
export function oauthOutboundEntries(config: OAuthConfig): string[] {
  return Object.values(config.providers).flatMap((provider) =>
    [provider.tokenUrl, provider.profileUrl, provider.emailsUrl, provider.revokeUrl].filter((url): url is string => url !== null),
  );
}

/**
 * A redirect target exactly as the allow-list holds it, or null: parsed, with no credentials,
 * query or fragment, reduced to `scheme://host/path` (host lower-cased by the parser). Custom
 * schemes keep their host (`relab://login`).
 */
export function normalizeRedirectTarget(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.username || url.password || url.search || url.hash || raw.includes("#") || raw.includes("?")) return null;
  const path = url.pathname === "/" && !raw.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "").startsWith("/") ? "" : url.pathname;
  return `${url.protocol}//${url.host}${path}`;
}
