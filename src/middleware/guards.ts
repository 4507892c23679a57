import type { Context } from "hono";
import { assertAdmin, assertSignedIn, assertVerified } from "../auth/permissions";
import type { SessionUser } from "../auth/session-user";
import type { AppEnv } from "../env";

// The permission checks of src/auth/permissions.ts applied to the request's caller (set by
// `authenticate`): what handlers and middleware call; services receive the user they return.

/** The signed-in user; 401 when the request is anonymous. */
export const requireUser = <E extends AppEnv>(c: Context<E>): SessionUser => assertSignedIn(c.get("user"));

/** The signed-in user with a verified email address (403 otherwise): creating and changing records needs it. */
export const requireVerified = <E extends AppEnv>(c: Context<E>): SessionUser => assertVerified(c.get("user"));

/** The signed-in superuser with TOTP; 403 for anyone else. */
export const requireAdmin = <E extends AppEnv>(c: Context<E>): SessionUser => assertAdmin(c.get("user"));
