import { createRoute } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../../lib/openapi";
import { problemResponses } from "../../../lib/problem";
import { authenticate } from "../../../middleware/authenticate";
import { credentialsBody, mfaRequiredResponse } from "../auth.schemas";

const COOKIES =
  "`__Host-relab-auth` (access token, Max-Age 900) and `__Host-relab-refresh` (refresh token, up to 30 days), both `HttpOnly; Secure; SameSite=Lax; Path=/`.";

export const sessionLogin = createRoute({
  method: "post",
  path: "/auth/session/login",
  operationId: "sessionLogin",
  tags: ["Auth"],
  summary: "Sign in (browser session)",
  description:
    `Password sign-in for browsers: sets ${COOKIES} Refused with 403 when the browser marks the request cross-site ` +
    "(`Sec-Fetch-Site: cross-site`) or sends an `Origin` outside the allow-list. Failures as for the bearer login.",
  request: { body: credentialsBody },
  responses: {
    204: { description: "Signed in; the cookies are set." },
    ...mfaRequiredResponse,
    ...problemResponses(400, 403, 413, 415, 422, 503),
  },
});

export const sessionRefresh = createRoute({
  method: "post",
  path: "/auth/session/refresh",
  operationId: "sessionRefresh",
  tags: ["Auth"],
  summary: "Rotate the session cookies",
  description: `Reads the refresh cookie and sets new ${COOKIES} A missing, spent or revoked refresh cookie gets 401 and both cookies are cleared.`,
  responses: { 204: { description: "New cookies are set." }, ...problemResponses(401, 403, 503) },
});

export const sessionLogout = createRoute({
  method: "post",
  path: "/auth/session/logout",
  operationId: "sessionLogout",
  tags: ["Auth"],
  summary: "Sign out (browser session)",
  description:
    "Ends the session of the cookies (its refresh token is revoked and its access tokens stop working), clears both cookies and sends " +
    '`Clear-Site-Data: "cache", "cookies", "storage"`. Answers 204 even without cookies.',
  responses: { 204: { description: "Signed out." }, ...problemResponses(403, 503) },
});

export const revokeAllSessions = createRoute({
  method: "post",
  path: "/auth/sessions/revoke-all",
  operationId: "revokeAllSessions",
  tags: ["Auth"],
  summary: "Sign out everywhere",
  description:
    "Revokes every refresh and access token of the account, on every device, at once (not 15 minutes later). " +
    "Also clears this browser's cookies and session data.",
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  responses: { 204: { description: "Every session ended." }, ...problemResponses(401, 403, 503) },
});
