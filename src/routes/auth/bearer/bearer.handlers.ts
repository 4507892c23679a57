import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { audit } from "../../../lib/audit";
import { passwordLogin, refreshSession, refreshTokenInvalid } from "../../../services/login";
import { endSessionByRefreshToken } from "../../../services/sessions";
import { readCredentials } from "../credentials";
import { tokenPair } from "../transport";
import type { bearerLogin, bearerLogout, bearerRefresh } from "./bearer.routes";

export const login: RouteHandler<typeof bearerLogin, AppEnv> = async (c) => {
  const { username, password } = readCredentials(c);
  const outcome = await passwordLogin(c.get("services"), username, password, "bearer");
  if (outcome.kind === "challenge") return c.json({ mfa_required: true as const, mfa_token: outcome.mfaToken }, 202);
  return c.json(tokenPair(outcome.grant), 200);
};

export const refresh: RouteHandler<typeof bearerRefresh, AppEnv> = async (c) => {
  const { refresh_token } = c.req.valid("json");
  const result = await refreshSession(c.get("services"), refresh_token);
  if ("refused" in result) throw refreshTokenInvalid();
  return c.json(tokenPair(result.grant), 200);
};

export const logout: RouteHandler<typeof bearerLogout, AppEnv> = async (c) => {
  const userId = await endSessionByRefreshToken(c.get("services"), c.req.valid("json").refresh_token);
  if (userId !== null) audit(c.get("log"), "auth.logout", { transport: "bearer", user_id: userId });
  return c.body(null, 204);
};
