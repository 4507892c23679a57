import type { AppRouteHandler } from "../../../env";
import { audit } from "../../../lib/audit";
import { passwordLogin, refreshSession, refreshTokenInvalid } from "../../../services/sign-in/login";
import { endSessionByRefreshToken } from "../../../services/sign-in/sessions";
import { readCredentials } from "../credentials";
import { tokenPair } from "../transport";
import type { bearerLogin, bearerLogout, bearerRefresh } from "./bearer.routes";

export const login: AppRouteHandler<typeof bearerLogin> = async (c) => {
  const { username, password } = readCredentials(c);
  const outcome = await passwordLogin(c.get("services"), username, password, "bearer");
  if (outcome.kind === "challenge") return c.json({ mfa_required: true as const, mfa_token: outcome.mfaToken }, 202);
  return c.json(tokenPair(outcome.grant), 200);
};

export const refresh: AppRouteHandler<typeof bearerRefresh> = async (c) => {
  const { refresh_token } = c.req.valid("json");
  const result = await refreshSession(c.get("services"), refresh_token);
  if ("refused" in result) throw refreshTokenInvalid();
  return c.json(tokenPair(result.grant), 200);
};

export const logout: AppRouteHandler<typeof bearerLogout> = async (c) => {
  const userId = await endSessionByRefreshToken(c.get("services"), c.req.valid("json").refresh_token);
  if (userId !== null) audit(c.get("log"), "auth.logout", { transport: "bearer", user_id: userId });
  return c.body(null, 204);
};
