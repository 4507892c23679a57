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

/** What the ownership rule needs of a record: whose it is. */
export interface OwnedRecord {
  ownerId: number;
}

/**
 * The one write rule for research records: the owner may change their record; anyone else is told
 * it does not exist (404, so existence is not revealed). Superuser moderation (correct and delete,
 * never add content) will extend this rule, not the handlers.
 */
export function assertMayModify(user: SessionUser, record: OwnedRecord | null, notFound: () => ApiError): asserts record is OwnedRecord {
  if (!record || record.ownerId !== user.id) throw notFound();
}

/** Profile visibility of a record's owner, and who is looking. */
export interface OwnerView {
  ownerId: number;
  ownerUsername: string;
  ownerVisibility: "public" | "community" | "private";
}

/**
 * Whether `viewer` may see who owns a record (spec, owner visibility): public profiles to
 * everyone, community profiles to signed-in users, private ones to the owner and superusers.
 */
export function ownerVisibleTo(viewer: SessionUser | null, owner: OwnerView): boolean {
  if (owner.ownerVisibility === "public") return true;
  if (!viewer) return false;
  if (owner.ownerVisibility === "community") return true;
  return viewer.id === owner.ownerId || viewer.isSuperuser;
}
