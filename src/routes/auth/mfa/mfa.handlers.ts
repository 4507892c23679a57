import type { AppRouteHandler } from "../../../env";
import { requireUser } from "../../../middleware/guards";
import { completeChallenge } from "../../../services/sign-in/mfa-challenge";
import { beginTotpSetup, confirmTotp, disableTotp, regenerateRecoveryCodes as regenerate } from "../../../services/sign-in/totp-enrolment";
import { setSession, tokenPair } from "../transport";
import type * as routes from "./mfa.routes";

export const totpSetup: AppRouteHandler<typeof routes.totpSetup> = async (c) => {
  const setup = await beginTotpSetup(c.get("services"), requireUser(c));
  return c.json({ setup_token: setup.setupToken, secret: setup.secret, otpauth_uri: setup.otpauthUri }, 200);
};

export const totpConfirm: AppRouteHandler<typeof routes.totpConfirm> = async (c) => {
  const { setup_token, code, current_password } = c.req.valid("json");
  const { recoveryCodes, grant } = await confirmTotp(c.get("services"), requireUser(c), {
    setupToken: setup_token,
    code,
    currentPassword: current_password,
  });
  if (c.get("session")?.transport === "cookie") {
    setSession(c, grant);
    return c.json({ recovery_codes: recoveryCodes }, 200);
  }
  return c.json({ recovery_codes: recoveryCodes, tokens: tokenPair(grant) }, 200);
};

export const totpDisable: AppRouteHandler<typeof routes.totpDisable> = async (c) => {
  const { code, current_password } = c.req.valid("json");
  await disableTotp(c.get("services"), requireUser(c), { code, currentPassword: current_password });
  return c.body(null, 204);
};

export const regenerateRecoveryCodes: AppRouteHandler<typeof routes.regenerateRecoveryCodes> = async (c) => {
  const codes = await regenerate(c.get("services"), requireUser(c), c.req.valid("json").code);
  return c.json({ recovery_codes: codes }, 200);
};

export const mfaChallenge: AppRouteHandler<typeof routes.mfaChallenge> = async (c) => {
  const { mfa_token, code } = c.req.valid("json");
  const { transport, grant } = await completeChallenge(c.get("services"), mfa_token, code);
  if (transport === "cookie") {
    setSession(c, grant);
    return c.body(null, 204);
  }
  return c.json(tokenPair(grant), 200);
};
