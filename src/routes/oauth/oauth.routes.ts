import { createRoute, z } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../lib/openapi";
import { problemResponses } from "../../lib/problem";
import { authenticate } from "../../middleware/authenticate";
import { TokenPairSchema } from "../auth/auth.schemas";

const SIGN_IN = z.enum(["google", "github"]);
const ANY = z.enum(["google", "github", "google-youtube"]);
const signInParams = z.object({ provider: SIGN_IN.openapi({ param: { name: "provider", in: "path" }, example: "google" }) });
const anyParams = z.object({ provider: ANY.openapi({ param: { name: "provider", in: "path" }, example: "github" }) });
const RedirectQuery = z.object({
  redirect_uri: z
    .string()
    .min(1)
    .max(2048)
    .openapi({ description: "Where the result goes: exactly an allow-listed target.", example: "https://app.relab.example/login" }),
});
const VerifierSchema = z
  .string()
  .regex(/^[A-Za-z0-9._~-]{43,128}$/, "A PKCE code verifier: 43 to 128 characters of letters, digits and -._~.")
  .optional()
  .openapi({ description: "Token flow: the verifier of the `code_challenge` given at authorization (required then)." });
const TokenAuthorizeQuery = RedirectQuery.extend({
  code_challenge: z
    .string()
    .regex(/^[A-Za-z0-9_-]{43}$/, "base64url(SHA-256(code_verifier)): 43 characters.")
    .optional()
    .openapi({ description: "Required: the app's own PKCE challenge (S256). Only the app holding its verifier can claim the sign-in." }),
});
const CallbackQuery = z.object({
  code: z.string().max(2048).optional(),
  state: z.string().max(4096).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2048).optional(),
  scope: z.string().max(2048).optional(),
});
const AuthorizationSchema = z
  .object({ authorization_url: z.string().openapi({ description: "Send the browser here (the provider's consent screen)." }) })
  .openapi("OAuthAuthorization");
const StepUpSchema = z
  .strictObject({ current_password: z.string().max(1024).optional(), mfa_code: z.string().max(64).optional() })
  .openapi("OAuthStepUp", {
    description:
      "The account's password, and with TOTP a code; neither for an account with neither, whose session began with a sign-in within 10 minutes.",
  });
const json = <T extends z.ZodType>(schema: T, required = true) => ({ required, content: { "application/json": { schema } } });
const FRAGMENT =
  "Redirects (302) to the target given at authorization, with the result in the URL fragment only: `#status=success`, " +
  "`#status=mfa_required&mfa_handoff=<one-time>` (claim it at POST /v1/auth/mfa/oauth/claim within 2 minutes), or " +
  "`#status=error&error=<code>` (codes: docs/oauth.md). A state that is missing, altered or expired is 400 `OAUTH_STATE_INVALID`.";
const REDIRECT = { 302: { description: "To the redirect target, result in the fragment." } };

export const sessionAuthorize = createRoute({
  method: "get",
  path: "/oauth/{provider}/session/authorize",
  operationId: "oauthSessionAuthorize",
  tags: ["Auth"],
  summary: "Start signing in with Google or GitHub (browser session)",
  description:
    "Answers the provider URL to open, and sets a short-lived CSRF cookie the callback checks. `redirect_uri` must be exactly the app's " +
    "`/login` or `/account` page (the native app signs in with the token flow), else 400 `REDIRECT_URI_NOT_ALLOWED`. A provider that is " +
    "not configured: 404 `OAUTH_PROVIDER_NOT_CONFIGURED`.",
  request: { params: signInParams, query: RedirectQuery },
  responses: {
    200: { description: "The provider URL.", content: { "application/json": { schema: AuthorizationSchema } } },
    ...problemResponses(400, 404, 422),
  },
});

export const sessionCallback = createRoute({
  method: "get",
  path: "/oauth/{provider}/session/callback",
  operationId: "oauthSessionCallback",
  tags: ["Auth"],
  summary: "Provider callback: browser sign-in",
  description: `${FRAGMENT} On success the session cookies are set.`,
  request: { params: signInParams, query: CallbackQuery },
  responses: { ...REDIRECT, ...problemResponses(400, 404, 422) },
});

export const tokenAuthorize = createRoute({
  method: "get",
  path: "/oauth/{provider}/token/authorize",
  operationId: "oauthTokenAuthorize",
  tags: ["Auth"],
  summary: "Start signing in with Google or GitHub (bearer tokens, for apps)",
  description:
    "As the session variant, for apps that hold bearer tokens; on when `OAUTH_TOKEN_FLOW_ENABLED` (else 404 `OAUTH_TOKEN_FLOW_DISABLED`). " +
    "The redirect target is the native app's (`<scheme>://login|account`). No cookie is involved: the app sends its own PKCE " +
    "`code_challenge` (S256; missing: 400 `CODE_CHALLENGE_REQUIRED`) and claims the hand-off with the verifier, so a sign-in " +
    "started elsewhere cannot be planted on the app.",
  request: { params: signInParams, query: TokenAuthorizeQuery },
  responses: {
    200: { description: "The provider URL.", content: { "application/json": { schema: AuthorizationSchema } } },
    ...problemResponses(400, 404, 422),
  },
});

export const tokenCallback = createRoute({
  method: "get",
  path: "/oauth/{provider}/token/callback",
  operationId: "oauthTokenCallback",
  tags: ["Auth"],
  summary: "Provider callback: app sign-in",
  description: `${FRAGMENT} On success the fragment is \`#status=success&login_handoff=<one-time>\`: the app exchanges it at POST /v1/oauth/token/claim for its tokens.`,
  request: { params: signInParams, query: CallbackQuery },
  responses: { ...REDIRECT, ...problemResponses(400, 404, 422) },
});

export const claimLogin = createRoute({
  method: "post",
  path: "/oauth/token/claim",
  operationId: "oauthClaimLogin",
  tags: ["Auth"],
  summary: "Exchange a sign-in hand-off for bearer tokens",
  description:
    "Once, within 2 minutes of the callback, with the `code_verifier` of the app's `code_challenge`; anything else is 400 `OAUTH_HANDOFF_INVALID`. " +
    "On when `OAUTH_TOKEN_FLOW_ENABLED` (else 404 `OAUTH_TOKEN_FLOW_DISABLED`).",
  request: {
    body: json(z.strictObject({ login_handoff: z.string().min(1).max(256), code_verifier: VerifierSchema }).openapi("OAuthLoginClaim")),
  },
  responses: {
    200: { description: "The session.", content: { "application/json": { schema: TokenPairSchema } } },
    ...problemResponses(400, 404, 413, 415, 422),
  },
});

export const associateAuthorize = createRoute({
  method: "post",
  path: "/oauth/{provider}/associate/authorize",
  operationId: "oauthAssociateAuthorize",
  tags: ["Auth"],
  summary: "Start linking Google, GitHub or the video platform to your account",
  description:
    "A step-up (`current_password`, and with TOTP `mfa_code`; an account with neither needs a session signed in within 10 minutes). " +
    "`google-youtube` links the video platform for live streaming (scope: YouTube). Sets the CSRF cookie, so the link is made in a " +
    "browser (the redirect target is the app's web page); the callback redirects with the result. An account already linked to another " +
    "account of the provider: `error=link_exists` (unlink first).",
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { params: anyParams, query: RedirectQuery, body: json(StepUpSchema, false) },
  responses: {
    200: { description: "The provider URL.", content: { "application/json": { schema: AuthorizationSchema } } },
    ...problemResponses(400, 401, 403, 404, 413, 415, 422),
  },
});

export const associateCallback = createRoute({
  method: "get",
  path: "/oauth/{provider}/associate/callback",
  operationId: "oauthAssociateCallback",
  tags: ["Auth"],
  summary: "Provider callback: linking",
  description: `${FRAGMENT} A provider account already linked to another account: \`error=already_linked\`.`,
  request: { params: anyParams, query: CallbackQuery },
  responses: { ...REDIRECT, ...problemResponses(400, 404, 422) },
});

export const unlink = createRoute({
  method: "delete",
  path: "/oauth/{provider}/associate",
  operationId: "oauthUnlink",
  tags: ["Auth"],
  summary: "Unlink Google, GitHub or the video platform",
  description:
    "A step-up as for linking. The last way to sign in (no password and no other sign-in provider) cannot be unlinked: 409 " +
    "`LAST_SIGN_IN_METHOD`. The provider is asked to revoke the grant. Not linked: 404 `OAUTH_NOT_LINKED`.",
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { params: anyParams, body: json(StepUpSchema, false) },
  responses: { 204: { description: "Unlinked." }, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422) },
});

export const listLinks = createRoute({
  method: "get",
  path: "/oauth/associations",
  operationId: "oauthListLinks",
  tags: ["Auth"],
  summary: "Your linked sign-ins",
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  responses: {
    200: {
      description: "The links.",
      content: {
        "application/json": {
          schema: z.array(z.object({ provider: ANY, account_email: z.string().nullable(), created_at: z.string() }).openapi("OAuthLink")),
        },
      },
    },
    ...problemResponses(401),
  },
});

export const claimMfaHandoff = createRoute({
  method: "post",
  path: "/auth/mfa/oauth/claim",
  operationId: "oauthClaimMfaHandoff",
  tags: ["Auth"],
  summary: "Exchange an OAuth MFA hand-off for the MFA challenge",
  description:
    "After a provider sign-in of an account with TOTP, the callback's fragment carries `mfa_handoff` instead of any token. Claim it " +
    "once, within 2 minutes, for the challenge token; then complete the sign-in at POST /v1/auth/mfa/challenge. A second claim, an " +
    "expired or unknown hand-off: 400 `OAUTH_HANDOFF_INVALID`. After the token flow, send the `code_verifier` of the app's challenge too.",
  request: {
    body: json(z.strictObject({ mfa_handoff: z.string().min(1).max(256), code_verifier: VerifierSchema }).openapi("OAuthMfaClaim")),
  },
  responses: {
    200: {
      description: "The challenge.",
      content: {
        "application/json": { schema: z.object({ mfa_required: z.literal(true), mfa_token: z.string() }).openapi("OAuthMfaChallenge") },
      },
    },
    ...problemResponses(400, 413, 415, 422),
  },
});
