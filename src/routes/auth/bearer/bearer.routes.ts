import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../../lib/problem";
import { credentialsBody, mfaRequiredResponse, TokenPairSchema } from "../auth.schemas";

const RefreshTokenBodySchema = z
  .strictObject({ refresh_token: z.string().min(1).max(512) })
  .openapi("RefreshTokenBody", { example: { refresh_token: "Xq2h0m3b2cT0pWq2b1n7dG9rZW4tZXhhbXBsZS1vbmx5" } });

export const bearerLogin = createRoute({
  method: "post",
  path: "/auth/bearer/login",
  operationId: "bearerLogin",
  tags: ["Auth"],
  summary: "Sign in (bearer tokens)",
  description:
    "Password sign-in for apps and scripts: returns a 15-minute access token and a refresh token (30 days of inactivity, 30 days absolute). " +
    "Unknown accounts, wrong passwords and inactive accounts all get the same 400 `LOGIN_BAD_CREDENTIALS`, byte for byte. " +
    "Unverified accounts may sign in; they cannot create or change records until verified. " +
    "Limits: 60 sign-ins a minute per client IP (shared with the session login), and 3 failed sign-ins a minute " +
    "per email address (any alias of the mailbox) and per username, whatever the IP; successful sign-ins do not count: the next attempt is 429 " +
    "`RATE_LIMITED`, even with the right password.",
  request: { body: credentialsBody },
  responses: {
    200: { description: "Signed in.", content: { "application/json": { schema: TokenPairSchema } } },
    ...mfaRequiredResponse,
    ...problemResponses(400, 413, 415, 422, 503),
  },
});

export const bearerRefresh = createRoute({
  method: "post",
  path: "/auth/bearer/refresh",
  operationId: "bearerRefresh",
  tags: ["Auth"],
  summary: "Rotate a refresh token",
  description:
    "Exchanges a refresh token for a new pair. The presented token is spent: using it again is refused with 401 " +
    "(and, more than a few seconds after it was rotated, ends the whole session, since it may have been stolen). " +
    "The new refresh token keeps the session's original absolute expiry.",
  request: { body: { required: true, content: { "application/json": { schema: RefreshTokenBodySchema } } } },
  responses: {
    200: { description: "A new token pair.", content: { "application/json": { schema: TokenPairSchema } } },
    ...problemResponses(401, 413, 415, 422, 503),
  },
});

export const bearerLogout = createRoute({
  method: "post",
  path: "/auth/bearer/logout",
  operationId: "bearerLogout",
  tags: ["Auth"],
  summary: "Sign out (bearer tokens)",
  description:
    "Revokes the submitted refresh token and ends its session: the session's access tokens stop working at once. " +
    "Answers 204 whether or not the token was still valid.",
  request: { body: { required: true, content: { "application/json": { schema: RefreshTokenBodySchema } } } },
  responses: { 204: { description: "Signed out." }, ...problemResponses(413, 415, 422, 503) },
});
