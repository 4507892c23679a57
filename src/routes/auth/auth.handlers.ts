import { isDisposableEmail } from "../../auth/account-names";
import type { AppRouteHandler } from "../../env";
import { register as registerAccount, requestVerification, verifyEmail } from "../../services/accounts/accounts";
import { requestPasswordReset, resetPassword as resetWithToken } from "../../services/sign-in/password-reset";
import type * as routes from "./auth.routes";
import { EmailSchema } from "./auth.schemas";

/** Accepted answers take at least this long, so a lookup that found an account is not faster or slower to answer. */
export const UNIFORM_RESPONSE_MS = 300;

async function uniformly(work: Promise<void>): Promise<void> {
  await Promise.all([work, new Promise((resolve) => setTimeout(resolve, UNIFORM_RESPONSE_MS))]);
}

export const register: AppRouteHandler<typeof routes.register> = async (c) => {
  const user = await registerAccount(c.get("services"), c.req.valid("json"));
  return c.json({ id: user.id, email: user.email, username: user.username }, 201);
};

export const verify: AppRouteHandler<typeof routes.verify> = async (c) => {
  const user = await verifyEmail(c.get("services"), c.req.valid("json").token);
  return c.json({ id: user.id, email: user.email, username: user.username, is_verified: user.isVerified }, 200);
};

export const requestVerifyToken: AppRouteHandler<typeof routes.requestVerifyToken> = async (c) => {
  await uniformly(requestVerification(c.get("services"), c.req.valid("json").email));
  return c.json({ detail: "If an unverified account uses this address, a new verification link is on its way." }, 202);
};

export const validateEmail: AppRouteHandler<typeof routes.validateEmail> = async (c) => {
  const { email } = c.req.valid("json");
  if (!EmailSchema.safeParse(email).success) return c.json({ is_valid: false, reason: "Not a valid email address." }, 200);
  if (isDisposableEmail(email)) {
    return c.json({ is_valid: false, reason: "Addresses of disposable-email providers cannot hold an account." }, 200);
  }
  return c.json({ is_valid: true, reason: null }, 200);
};

export const forgotPassword: AppRouteHandler<typeof routes.forgotPassword> = async (c) => {
  await uniformly(requestPasswordReset(c.get("services"), c.req.valid("json").email));
  return c.json({ detail: "If an account with this address exists, a password-reset link is on its way." }, 202);
};

export const resetPassword: AppRouteHandler<typeof routes.resetPassword> = async (c) => {
  const { token, password } = c.req.valid("json");
  await resetWithToken(c.get("services"), token, password);
  return c.body(null, 204);
};
