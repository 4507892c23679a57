import { and, asc, count, eq, or, type SQL, sql } from "drizzle-orm";
import { usernameViolation } from "../../auth/account-names";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { users } from "../../db/schema";
import { audit } from "../../lib/audit";
import { type PageQuery, pageWindow } from "../../lib/pagination";
import { ApiError } from "../../lib/problem";
import { containsText } from "../products/query";
import { revocationStatements, toSessionUser, USER_COLUMNS, USER_FIELDS, type UserRow } from "../sign-in/sessions";
import { totpRemovalStatements } from "../sign-in/totp-enrolment";
import { assertUsableUsername, uniqueViolation } from "./accounts";
import { lastSuperuser, notLastSuperuser, userNotFound } from "./deletion";

/** The filters of the admin user list; all optional, combined with AND. */
export interface AdminUserFilter {
  /** Case-insensitive substring of the username or the email address. */
  search?: string;
  role?: SessionUser["role"];
  isActive?: boolean;
  isSuperuser?: boolean;
}

// The system account (the inactive holder of deleted users' products) is not a user anyone
// administers: every admin route behaves as if it did not exist.
const ADMINISTERED = eq(users.is_system, false);

/** The administered account `userId`. */
const administered = (userId: number) => and(eq(users.id, userId), ADMINISTERED);

/** One page of accounts, ordered by id, and how many match; one round trip. */
export async function listUsers(
  svc: Pick<Services, "db">,
  filter: AdminUserFilter,
  page: PageQuery,
): Promise<{ users: SessionUser[]; total: number }> {
  const where: (SQL | undefined)[] = [ADMINISTERED];
  if (filter.search !== undefined) {
    where.push(or(containsText(sql`${users.username}`, filter.search), containsText(sql`${users.email}`, filter.search)));
  }
  if (filter.role !== undefined) where.push(eq(users.role, filter.role));
  if (filter.isActive !== undefined) where.push(eq(users.is_active, filter.isActive));
  if (filter.isSuperuser !== undefined) where.push(eq(users.is_superuser, filter.isSuperuser));
  const condition = and(...where);
  const { limit, offset } = pageWindow(page);
  const [rows, counted] = await batchRows<[UserRow, { total: number }]>(svc.db, [
    svc.db.select(USER_FIELDS).from(users).where(condition).orderBy(asc(users.id)).limit(limit).offset(offset),
    svc.db
      .select({ total: count().as("total") })
      .from(users)
      .where(condition),
  ]);
  return { users: rows.map(toSessionUser), total: counted[0]?.total ?? 0 };
}

/** One account; 404 `USER_NOT_FOUND` for an unknown id or the system account. */
export async function readUser(svc: Pick<Services, "db">, userId: number): Promise<SessionUser> {
  const rows = await svc.db.all<UserRow>(svc.db.select(USER_FIELDS).from(users).where(administered(userId)));
  if (!rows[0]) throw userNotFound();
  return toSessionUser(rows[0]);
}

/** What an administrator may change on an account; role and superuser status are not among them. */
export interface AdminUserChanges {
  is_active?: boolean | undefined;
  is_verified?: boolean | undefined;
  username?: string | undefined;
}

const CHANGE_COLUMNS = ["is_active", "is_verified", "username"] as const;

/**
 * Drops a username the account already has; refuses any other unusable one (422). Only a
 * refused name costs a read: the bootstrap superuser's `admin` is reserved, yet sending it back
 * unchanged must not fail.
 */
async function withUsableUsername(svc: Pick<Services, "db">, userId: number, changes: AdminUserChanges): Promise<AdminUserChanges> {
  const { username } = changes;
  if (username === undefined || usernameViolation(username) === null) return changes;
  const rows = await svc.db.all<{ username: string }>(svc.db.select({ username: users.username }).from(users).where(administered(userId)));
  if (!rows[0]) throw userNotFound();
  if (rows[0].username !== username) assertUsableUsername(username);
  return { ...changes, username: undefined };
}

/**
 * Applies an administrator's changes in one batch. Deactivation revokes every token of the account
 * and drops its pending login challenges in the same batch; it is refused (409) for the last
 * active superuser, decided inside the UPDATE so two concurrent deactivations of the last two
 * cannot both pass. A taken username is 409.
 */
export async function updateUser(
  svc: Pick<Services, "db" | "log">,
  actor: SessionUser,
  userId: number,
  requested: AdminUserChanges,
): Promise<SessionUser> {
  const changes = await withUsableUsername(svc, userId, requested);
  const values = CHANGE_COLUMNS.flatMap((column) => {
    const value = changes[column];
    if (value === undefined) return [];
    return [{ column: sql.raw(column), value: typeof value === "boolean" ? (value ? 1 : 0) : value }];
  });
  const before = svc.db.select(USER_FIELDS).from(users).where(administered(userId));
  if (values.length === 0) {
    const user = await readUser(svc, userId);
    audit(svc.log, "admin.user.updated", { actor_id: actor.id, user_id: userId, fields: [] });
    return user;
  }

  const deactivating = changes.is_active === false;
  const sets = sql.join(
    values.map(({ column, value }) => sql`${column} = ${value}`),
    sql`, `,
  );
  const differs = sql.join(
    values.map(({ column, value }) => sql`${column} IS NOT ${value}`),
    sql` OR `,
  );
  const guard = deactivating ? sql`AND ${notLastSuperuser(userId)}` : sql``;
  // The revocation runs only if this batch's UPDATE left the account inactive.
  const inactive = sql`EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND ${ADMINISTERED} AND is_active = 0)`;
  let found: UserRow[];
  let updated: UserRow[];
  try {
    [found, updated] = await batchRows<[UserRow, UserRow, ...unknown[]]>(svc.db, [
      before,
      // Raw: the last-superuser guard is the update's own condition, and `updated_at` moves only when a value differs.
      sql`UPDATE users SET ${sets}, updated_at = CASE WHEN ${differs} THEN unixepoch() ELSE updated_at END
        WHERE id = ${userId} AND ${ADMINISTERED} ${guard} RETURNING ${USER_COLUMNS}`,
      ...(deactivating
        ? [...revocationStatements(userId, inactive), sql`DELETE FROM mfa_challenges WHERE user_id = ${userId} AND ${inactive}`]
        : []),
    ]);
  } catch (error) {
    throw uniqueViolation(error) ?? error;
  }
  if (!found[0]) throw userNotFound();
  if (!updated[0]) throw lastSuperuser();
  const old = found[0];
  const now = updated[0];
  const fields = CHANGE_COLUMNS.filter((column) => old[column] !== now[column]);
  audit(svc.log, "admin.user.updated", { actor_id: actor.id, user_id: userId, fields });
  if (deactivating) audit(svc.log, "auth.sessions.revoked", { user_id: userId, reason: "deactivated" });
  return toSessionUser(now);
}

function superuserRoleFixed(): ApiError {
  return new ApiError(400, {
    code: "SUPERUSER_ROLE_FIXED",
    detail: "A superuser always has the lab role; it cannot be set to contributor.",
  });
}

/** Sets an account's role in one batch; a superuser keeps `lab` (400 for `contributor`). */
export async function setRole(
  svc: Pick<Services, "db" | "log">,
  actor: SessionUser,
  userId: number,
  role: SessionUser["role"],
): Promise<SessionUser> {
  // In the UPDATE itself, so a concurrent promotion to superuser cannot slip between check and write.
  const keepsLab = role === "contributor" ? sql`AND is_superuser = 0` : sql``;
  const [found, updated] = await batchRows<[{ role: SessionUser["role"] }, UserRow]>(svc.db, [
    svc.db.select({ role: users.role }).from(users).where(administered(userId)),
    // Raw: the superuser check is the update's own condition, and `updated_at` moves only when the role changes.
    sql`UPDATE users SET role = ${role}, updated_at = CASE WHEN role IS NOT ${role} THEN unixepoch() ELSE updated_at END
      WHERE id = ${userId} AND ${ADMINISTERED} ${keepsLab} RETURNING ${USER_COLUMNS}`,
  ]);
  if (!found[0]) throw userNotFound();
  if (!updated[0]) throw superuserRoleFixed();
  audit(svc.log, "admin.user.role_changed", { actor_id: actor.id, user_id: userId, from: found[0].role, to: role });
  return toSessionUser(updated[0]);
}

/**
 * Removes an account's TOTP enrolment (seed, recovery codes, pending challenges) and revokes every
 * session, in one batch, so whoever holds the password signs in again without a second step and
 * enrols anew. Idempotent: an account without TOTP still has its sessions revoked.
 */
export async function resetMfa(svc: Pick<Services, "db" | "log">, actor: SessionUser, userId: number): Promise<void> {
  // A condition for the revocation's hand-written statements (sign-in/sessions.ts): nothing is revoked for an unknown id.
  const exists = sql`EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND ${ADMINISTERED})`;
  const [found] = await batchRows<[{ totp_enabled: number }, ...unknown[]]>(svc.db, [
    svc.db.select({ totp_enabled: USER_FIELDS.totp_enabled }).from(users).where(administered(userId)),
    ...totpRemovalStatements(svc.db, userId),
    ...revocationStatements(userId, exists),
  ]);
  if (!found[0]) throw userNotFound();
  audit(svc.log, "admin.user.mfa_reset", { actor_id: actor.id, user_id: userId, was_enrolled: found[0].totp_enabled === 1 });
  audit(svc.log, "auth.sessions.revoked", { user_id: userId, reason: "admin_mfa_reset" });
}
