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

/**
 * Whether a user holds a superuser's powers: the `/admin` routes, moderation of others' records,
 * reading private profiles. The spec makes every one of them depend on TOTP enrolment; a
 * superuser without it is an ordinary user everywhere but `/admin`, where `requireAdmin` says why.
 */
export function hasAdminPowers(user: SessionUser | null): boolean {
  return user !== null && user.isSuperuser && user.totpEnabled;
}

/** The signed-in superuser with TOTP; 403 for anyone else (a superuser without TOTP is told to enrol). */
export function requireAdmin(c: Context<AppEnv>): SessionUser {
  const user = requireUser(c);
  if (!user.isSuperuser) {
    throw new ApiError(403, { code: "SUPERUSER_REQUIRED", detail: "This route is for superusers." });
  }
  if (!user.totpEnabled) {
    throw new ApiError(403, {
      code: "ADMIN_TOTP_REQUIRED",
      detail: "Superuser powers need two-step verification: enrol TOTP (POST /v1/auth/mfa/totp/setup) first.",
    });
  }
  return user;
}

/** What the ownership rule needs of a record: whose it is. */
export interface OwnedRecord {
  ownerId: number;
}

/**
 * What a write does to someone's record: `correct` (change its details, or remove media, materials
 * or components) or `add` (new components, materials, uploads). Moderation may correct, never add.
 */
export type WriteIntent = "correct" | "add";

/**
 * The one write rule for research records: the owner may do anything to their record; a superuser
 * with TOTP may correct and delete anyone's (moderation, which the caller audits: see
 * `isModeration`) but never add to it; anyone else is told the record does not exist (404, so
 * existence is not revealed).
 */
export function assertMayModify(
  user: SessionUser,
  record: OwnedRecord | null,
  notFound: () => ApiError,
  intent: WriteIntent = "correct",
): asserts record is OwnedRecord {
  if (!record) throw notFound();
  if (record.ownerId === user.id) return;
  if (intent === "correct" && hasAdminPowers(user)) return;
  throw notFound();
}

/** Whether a write that `assertMayModify` allowed is a superuser acting on someone else's record. */
export function isModeration(user: SessionUser, record: OwnedRecord): boolean {
  return record.ownerId !== user.id;
}

/** Profile visibility of a record's owner, and who is looking. */
export interface OwnerView {
  ownerId: number;
  ownerUsername: string;
  ownerVisibility: "public" | "community" | "private";
}

/**
 * Whether `viewer` may see who owns a record (spec, owner visibility): public profiles to
 * everyone, community profiles to signed-in users, private ones to the owner and superusers with TOTP.
 */
export function ownerVisibleTo(viewer: SessionUser | null, owner: OwnerView): boolean {
  if (owner.ownerVisibility === "public") return true;
  if (!viewer) return false;
  if (owner.ownerVisibility === "community") return true;
  return viewer.id === owner.ownerId || hasAdminPowers(viewer);
}
