import { and, eq } from "drizzle-orm";
import type { OAuthFlow, OAuthProvider, OAuthProviderConfig } from "../../auth/oauth-config";
import { normalizeRedirectTarget } from "../../auth/oauth-config";
import { createState, csrfMatches, type LinkTarget, type OAuthState, openState } from "../../auth/oauth-state";
import type { Services } from "../../container";
import { users } from "../../db/schema";
import { audit } from "../../lib/audit";
import { ApiError, notFound } from "../../lib/problem";
import { completeLogin } from "../sign-in/login";
import { type SessionGrant, toSessionUser, USER_FIELDS, type UserRow } from "../sign-in/sessions";
import { associateAccount, signInAccount, spendStateNonce } from "./accounts";
import { authorizationUrl, exchangeCode, fetchProfile, OAuthFailure, type ProviderProfile } from "./client";
import { createHandoff } from "./handoffs";

/** Which flows each provider offers: the video platform is an association, never a sign-in. */
const FLOWS: Record<OAuthProvider, readonly OAuthFlow[]> = {
  google: ["session", "token", "associate"],
  github: ["session", "token", "associate"],
  "google-youtube": ["associate"],
};

/** The provider's configuration for `flow`; 404 when it is not configured or does not offer the flow. */
export function providerFor(svc: Pick<Services, "config">, provider: OAuthProvider, flow: OAuthFlow): OAuthProviderConfig {
  const config = svc.config.oauth.providers[provider];
  if (!config || !FLOWS[provider].includes(flow)) {
    throw notFound(`Sign-in with ${provider} is not available here.`, "OAUTH_PROVIDER_NOT_CONFIGURED");
  }
  if (flow === "token" && !svc.config.oauth.tokenFlowEnabled) {
    throw notFound("The bearer-token OAuth flow is not enabled on this deployment.", "OAUTH_TOKEN_FLOW_DISABLED");
  }
  return config;
}

/** The normalised redirect target, which must be on the allow-list exactly (400 otherwise). */
export function allowedRedirect(svc: Pick<Services, "config">, raw: string): string {
  const target = normalizeRedirectTarget(raw);
  if (target === null || !svc.config.oauth.redirectTargets.has(target)) {
    throw new ApiError(400, {
      code: "REDIRECT_URI_NOT_ALLOWED",
      detail:
        "redirect_uri must be exactly one of the app's sign-in targets (its /login or /account page, or the native app's login or account link).",
    });
  }
  return target;
}

/** Starts an authorization: the provider's URL to send the browser to, and the CSRF cookie value for browser flows. */
export async function beginAuthorization(
  svc: Pick<Services, "config">,
  request: {
    provider: OAuthProvider;
    flow: OAuthFlow;
    redirect: string;
    /** The signed-in account a link is for (associate flow), with its revocation epoch. */
    linking: LinkTarget | null;
    callbackUrl: string;
    appChallenge: string | null;
  },
): Promise<{ authorizationUrl: string; csrf: string | null }> {
  const config = providerFor(svc, request.provider, request.flow);
  const redirect = allowedRedirect(svc, request.redirect);
  const scheme = svc.config.oauth.nativeScheme;
  const native = scheme !== null && redirect.startsWith(`${scheme}://`);
  // Browser flows are bound to the browser by the CSRF cookie, which the native app's browser
  // would not hold; the app signs in with the token flow, bound by its own PKCE challenge.
  if (native !== (request.flow === "token")) {
    throw new ApiError(400, {
      code: "REDIRECT_URI_NOT_ALLOWED",
      detail: "The native app's targets go with the token flow (/token/authorize); the app's web pages with the session and link flows.",
    });
  }
  if (request.flow === "token" && !request.appChallenge) {
    throw new ApiError(400, {
      code: "CODE_CHALLENGE_REQUIRED",
      detail: "The token flow needs `code_challenge`: base64url(SHA-256(code_verifier)); the claim sends the verifier.",
    });
  }
  const { state, csrf, challenge } = await createState(
    svc.config.dataKey,
    {
      provider: request.provider,
      flow: request.flow,
      redirect,
      userId: request.linking?.userId ?? null,
      tokensValidAfter: request.linking?.tokensValidAfter ?? null,
      appChallenge: request.appChallenge,
    },
    request.flow !== "token",
  );
  return { authorizationUrl: authorizationUrl(request.provider, config, request.callbackUrl, state, challenge), csrf };
}

/** Where a callback sends the browser, and the session to set for the cookie flow. */
export interface CallbackResult {
  location: string;
  grant: SessionGrant | null;
}

export function stateInvalid(): ApiError {
  return new ApiError(400, {
    code: "OAUTH_STATE_INVALID",
    detail: "The sign-in state is missing, altered or expired (10 minutes); start the sign-in again.",
  });
}

const withFragment = (target: string, fields: Record<string, string>) => `${target}#${new URLSearchParams(fields).toString()}`;

/**
 * Completes a callback. A state that does not open (tampered, expired, another provider or flow)
 * is a 400: without it there is no trusted place to send the browser. Everything after that ends
 * in a redirect to the state's target with the result in the fragment only: `status=success`,
 * `status=mfa_required&mfa_handoff=<one-time>` or `status=error&error=<code>`; tokens never.
 */
export async function completeCallback(
  svc: Services,
  request: {
    provider: OAuthProvider;
    flow: OAuthFlow;
    query: Record<string, string | undefined>;
    csrfCookie: string | undefined;
    callbackUrl: string;
  },
): Promise<CallbackResult> {
  const config = providerFor(svc, request.provider, request.flow);
  const sealed = request.query.state;
  const state = sealed ? await openState(svc.config.dataKey, sealed, request.provider, request.flow) : null;
  if (!state) throw stateInvalid();
  try {
    return await finish(svc, config, state, request);
  } catch (error) {
    if (!(error instanceof OAuthFailure)) throw error;
    audit(svc.log, "auth.oauth.failed", { provider: request.provider, flow: request.flow, error: error.code, reason: error.message });
    return { location: withFragment(state.redirect, { status: "error", error: error.code }), grant: null };
  }
}

async function finish(
  svc: Services,
  config: OAuthProviderConfig,
  state: OAuthState,
  request: {
    provider: OAuthProvider;
    flow: OAuthFlow;
    query: Record<string, string | undefined>;
    csrfCookie: string | undefined;
    callbackUrl: string;
  },
): Promise<CallbackResult> {
  if (!csrfMatches(state, request.csrfCookie)) throw new OAuthFailure("invalid_state", "CSRF cookie missing or different");
  if (!(await spendStateNonce(svc, state.nonce, state.expiresAt))) throw new OAuthFailure("invalid_state", "state already used");
  const { code, error } = request.query;
  if (error) throw new OAuthFailure(error === "access_denied" ? "access_denied" : "provider_error", `provider said ${error.slice(0, 40)}`);
  if (!code) throw new OAuthFailure("invalid_request", "no code");

  const tokens = await exchangeCode(svc, config, code, state.verifier, request.callbackUrl);
  const profile: ProviderProfile & { login?: string } = await fetchProfile(svc, request.provider, config, tokens.accessToken);
  const success = withFragment(state.redirect, { status: "success" });

  if (state.flow === "associate") {
    await associateAccount(
      svc,
      { userId: state.userId!, tokensValidAfter: state.tokensValidAfter ?? null },
      request.provider,
      profile,
      tokens,
    );
    return { location: success, grant: null };
  }

  const user = await signInAccount(svc, request.provider as "google" | "github", profile, tokens, null);
  if (state.flow === "token" && !user.totpEnabled) {
    // The app claims its bearer session with the hand-off (POST /v1/oauth/token/claim).
    const handoff = await createHandoff(svc, "login", user, null, state.appChallenge);
    return { location: withFragment(state.redirect, { status: "success", login_handoff: handoff }), grant: null };
  }
  const outcome = await completeLogin(svc, user, state.flow === "token" ? "bearer" : "cookie");
  if (outcome.kind === "challenge") {
    const handoff = await createHandoff(svc, "mfa", user, outcome.mfaToken, state.appChallenge);
    return { location: withFragment(state.redirect, { status: "mfa_required", mfa_handoff: handoff }), grant: null };
  }
  return { location: success, grant: outcome.grant };
}

/** The account behind a claimed login hand-off, for its bearer session. */
export async function handoffUser(svc: Pick<Services, "db">, userId: number) {
  const rows = await svc.db.all<UserRow>(
    svc.db
      .select(USER_FIELDS)
      .from(users)
      .where(and(eq(users.id, userId), eq(users.is_active, true))),
  );
  return rows[0] ? toSessionUser(rows[0]) : null;
}
