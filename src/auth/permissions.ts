import { type SQL, sql } from "drizzle-orm";
import { ApiError } from "../lib/problem";
import type { SessionUser } from "./session-user";

// The one place where the service decides who may do what, in TypeScript and, side by side, in
// the SQL of conditional writes, so that the two cannot drift apart. Nothing here knows HTTP: the
// routes read the caller with src/middleware/guards.ts; services receive the user.

/** 401 for a route that needs a signed-in user and got no credentials. */
export function authenticationRequired(): ApiError {
  return new ApiError(401, {
    code: "AUTHENTICATION_REQUIRED",
    detail: "Sign in to use this route: send a bearer access token or the session cookies.",
    headers: { "WWW-Authenticate": 'Bearer realm="relab"' },
  });
}

/** The signed-in user; 401 when there is none (an anonymous request). */
export function assertSignedIn(user: SessionUser | null): SessionUser {
  if (!user) throw authenticationRequired();
  return user;
}

/** The signed-in user, who must have verified their email address: creating and changing records needs it (403). */
export function assertVerified(caller: SessionUser | null): SessionUser {
  const user = assertSignedIn(caller);
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
export function assertAdmin(caller: SessionUser | null): SessionUser {
  const user = assertSignedIn(caller);
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
 * `isModeration`) but never add to it. `mayModifySql` is the same rule in SQL.
 */
export function mayModify(user: SessionUser, ownerId: number, intent: WriteIntent = "correct"): boolean {
  return ownerId === user.id || (intent === "correct" && hasAdminPowers(user));
}

/**
 * `mayModify` as a statement condition: true for the rows whose owner (`ownerColumn`) the rule lets
 * `user` write to with `intent`. For conditional writes that check and write in one statement.
 */
export function mayModifySql(user: SessionUser, ownerColumn: SQL, intent: WriteIntent = "correct"): SQL {
  return intent === "correct" && hasAdminPowers(user) ? sql`1` : ownedBySql(user.id, ownerColumn);
}

/**
 * Owner-only access in SQL: what the write rule allows for `add`, and all that a private record
 * (a camera and its stream, which superusers do not moderate) allows anyone, reads included.
 */
export function ownedBySql(ownerId: number, ownerColumn: SQL): SQL {
  return sql`${ownerColumn} = ${ownerId}`;
}

/** The write rule for a record read first: anyone it refuses is told the record does not exist (404, so existence is not revealed). */
export function assertMayModify(
  user: SessionUser,
  record: OwnedRecord | null,
  notFound: () => ApiError,
  intent: WriteIntent = "correct",
): asserts record is OwnedRecord {
  if (!record || !mayModify(user, record.ownerId, intent)) throw notFound();
}

/**
 * Who sees a record's unsettled media (pending or rejected) and its history: whoever may correct
 * it, the owner and a superuser with TOTP (a moderator). In SQL: `mayModifySql(viewer, ownerColumn)`.
 */
export function maySeeUnsettled(viewer: SessionUser | null, ownerId: number): boolean {
  return viewer !== null && mayModify(viewer, ownerId, "correct");
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
