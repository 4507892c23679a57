import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { audit } from "../lib/audit";
import { ApiError } from "../lib/problem";
import { authenticate } from "./authenticate";
import { requireAdmin } from "./guards";

const signedIn = authenticate("required");

/**
 * Guards every `/v1/admin/*` route, present and future, in one place: the caller must be a
 * superuser with TOTP (401 anonymous; 403 otherwise, audited as an authorization denial). Admin
 * routes therefore declare no `authenticate` of their own.
 */
export const adminOnly = createMiddleware<AppEnv>(async (c, next) =>
  signedIn(c, async () => {
    try {
      requireAdmin(c);
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) {
        audit(c.get("log"), "authorization.denied", { user_id: c.get("user")?.id ?? null, route: "admin", reason: error.code });
      }
      throw error;
    }
    await next();
  }),
);
