import type { Context } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../lib/problem";
import type { SessionUser } from "../services/sessions";
import { authenticationRequired } from "./authenticate";

// The one place where the service decides who may do what. Routes call these after
// `authenticate`; services receive the user they return.

/** The signed-in user; 401 when the request is anonymous. */
export function requireUser(c: Context<AppEnv>): SessionUser {
  const user = c.get("user");
  if (!user) throw authenticationRequired();
  return user;
}

/** The signed-in user, who must have verified their email address: creating and changing records needs it (403). */
export function requireVerified(c: Context<AppEnv>): SessionUser {
  const user = requireUser(c);
  if (!user.isVerified) {
    throw new ApiError(403, {
      code: "EMAIL_NOT_VERIFIED",
      detail: "Verify your email address before creating or changing records (POST /v1/auth/request-verify-token sends a new link).",
    });
  }
  return user;
}
