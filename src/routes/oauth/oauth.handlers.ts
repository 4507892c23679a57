import type { Context } from "hono";
import { readCookie } from "../../auth/cookies";
import type { OAuthFlow, OAuthProvider } from "../../auth/oauth-config";
import { clearedCsrfCookie, csrfCookie, type LinkTarget, OAUTH_CSRF_COOKIE } from "../../auth/oauth-state";
import type { AppEnv, AppRouteHandler } from "../../env";
import { audit } from "../../lib/audit";
import { requestOrigin } from "../../lib/http";
import { ApiError, notFound } from "../../lib/problem";
import { isoSeconds } from "../../lib/time";
import { requireUser } from "../../middleware/guards";
import { listLinks as readLinks, unlinkAccount } from "../../services/oauth/accounts";
import { beginAuthorization, completeCallback, handoffUser } from "../../services/oauth/flows";
import { claimHandoff, handoffInvalid } from "../../services/oauth/handoffs";
import { revokeLink } from "../../services/oauth/revocation";
import { startSession } from "../../services/sign-in/sessions";
import { assertStepUp } from "../../services/sign-in/step-up";
import { setSession, tokenPair } from "../auth/transport";
import type * as routes from "./oauth.routes";

const callbackUrl = (c: Context<AppEnv>, provider: OAuthProvider, flow: OAuthFlow) =>
  `${requestOrigin(c)}/v1/oauth/${provider}/${flow}/callback`;

async function authorize(
  c: Context<AppEnv>,
  provider: OAuthProvider,
  flow: OAuthFlow,
  redirect: string,
  linking: LinkTarget | null,
  appChallenge: string | null = null,
) {
  const { authorizationUrl, csrf } = await beginAuthorization(c.get("services"), {
    provider,
    flow,
    redirect,
    linking,
    callbackUrl: callbackUrl(c, provider, flow),
    appChallenge,
  });
  if (csrf !== null) c.header("Set-Cookie", csrfCookie(csrf), { append: true });
  c.header("Cache-Control", "no-store");
  return c.json({ authorization_url: authorizationUrl }, 200);
}

async function callback(c: Context<AppEnv>, provider: OAuthProvider, flow: OAuthFlow): Promise<Response> {
  const result = await completeCallback(c.get("services"), {
    provider,
    flow,
    query: c.req.query(),
    csrfCookie: readCookie(c.req.header("cookie"), OAUTH_CSRF_COOKIE),
    callbackUrl: callbackUrl(c, provider, flow),
  });
  if (flow !== "token") c.header("Set-Cookie", clearedCsrfCookie(), { append: true });
  if (result.grant) setSession(c, result.grant);
  c.header("Cache-Control", "no-store");
  return c.redirect(result.location, 302);
}

export const sessionAuthorize: AppRouteHandler<typeof routes.sessionAuthorize> = (c) =>
  authorize(c, c.req.valid("param").provider, "session", c.req.valid("query").redirect_uri, null);

export const tokenAuthorize: AppRouteHandler<typeof routes.tokenAuthorize> = (c) => {
  const query = c.req.valid("query");
  return authorize(c, c.req.valid("param").provider, "token", query.redirect_uri, null, query.code_challenge ?? null);
};

export const sessionCallback: AppRouteHandler<typeof routes.sessionCallback> = (c) => callback(c, c.req.valid("param").provider, "session");
export const tokenCallback: AppRouteHandler<typeof routes.tokenCallback> = (c) => callback(c, c.req.valid("param").provider, "token");
export const associateCallback: AppRouteHandler<typeof routes.associateCallback> = (c) =>
  callback(c, c.req.valid("param").provider, "associate");

export const associateAuthorize: AppRouteHandler<typeof routes.associateAuthorize> = async (c) => {
  const user = requireUser(c);
  const body = c.req.valid("json") ?? {};
  await assertStepUp(
    c.get("services"),
    user,
    { currentPassword: body.current_password, mfaCode: body.mfa_code },
    { operation: "Linking a sign-in" },
  );
  const linking = { userId: user.id, tokensValidAfter: user.tokensValidAfter };
  return authorize(c, c.req.valid("param").provider, "associate", c.req.valid("query").redirect_uri, linking);
};

export const unlink: AppRouteHandler<typeof routes.unlink> = async (c) => {
  const user = requireUser(c);
  const { provider } = c.req.valid("param");
  const body = c.req.valid("json") ?? {};
  const svc = c.get("services");
  await assertStepUp(svc, user, { currentPassword: body.current_password, mfaCode: body.mfa_code }, { operation: "Unlinking a sign-in" });
  const removed = await unlinkAccount(svc, user.id, provider);
  if (removed === "not_linked") throw notFound(`No ${provider} account is linked to yours.`, "OAUTH_NOT_LINKED");
  if (removed === "last_method") {
    throw new ApiError(409, {
      code: "LAST_SIGN_IN_METHOD",
      detail: "This is your only way to sign in: set a password (forgot-password sends a link) or link another provider first.",
    });
  }
  audit(svc.log, "auth.oauth.unlinked", { user_id: user.id, provider });
  await revokeLink(svc, removed);
  return c.body(null, 204);
};

export const listLinks: AppRouteHandler<typeof routes.listLinks> = async (c) => {
  const user = requireUser(c);
  const rows = await readLinks(c.get("services"), user.id);
  c.header("Cache-Control", "no-store");
  return c.json(
    rows.map((row) => ({ provider: row.provider, account_email: row.account_email, created_at: isoSeconds(row.created_at * 1000) })),
    200,
  );
};

export const claimLogin: AppRouteHandler<typeof routes.claimLogin> = async (c) => {
  const svc = c.get("services");
  if (!svc.config.oauth.tokenFlowEnabled)
    throw notFound("The bearer-token OAuth flow is not enabled on this deployment.", "OAUTH_TOKEN_FLOW_DISABLED");
  const body = c.req.valid("json");
  const { userId } = await claimHandoff(svc, "login", body.login_handoff, body.code_verifier);
  const user = await handoffUser(svc, userId);
  const grant = user ? await startSession(svc, svc.config.tokenSecret, user.id, user, { recordLogin: true }) : null;
  if (!user || !grant) throw handoffInvalid();
  audit(svc.log, "auth.login.succeeded", { transport: "bearer", user_id: user.id, via: "oauth" });
  c.header("Cache-Control", "no-store");
  return c.json(tokenPair(grant), 200);
};

export const claimMfaHandoff: AppRouteHandler<typeof routes.claimMfaHandoff> = async (c) => {
  const body = c.req.valid("json");
  const { secret } = await claimHandoff(c.get("services"), "mfa", body.mfa_handoff, body.code_verifier);
  c.header("Cache-Control", "no-store");
  return c.json({ mfa_required: true as const, mfa_token: secret! }, 200);
};
