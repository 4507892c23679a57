import { type SQL, sql } from "drizzle-orm";
import { usernameViolation } from "../../auth/account-names";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { audit } from "../../lib/audit";
import { type PageQuery, pageWindow } from "../../lib/pagination";
import { ApiError } from "../../lib/problem";
import { containsText } from "../products/query";
import { revocationStatements, toSessionUser, USER_COLUMNS, type UserRow } from "../sign-in/sessions";
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
const ADMINISTERED = sql`is_system = 0`;

/** One page of accounts, ordered by id, and how many match; one round trip. */
export async function listUsers(
  svc: Pick<Services, "db">,
  filter: AdminUserFilter,
  page: PageQuery,
): Promise<{ users: SessionUser[]; total: number }> {
  const where: SQL[] = [ADMINISTERED];
  if (filter.search !== undefined) {
    where.push(sql`(${containsText(sql.raw("username"), filter.search)} OR ${containsText(sql.raw("email"), filter.search)})`);
  }
  if (filter.role !== undefined) where.push(sql`role = ${filter.role}`);
  if (filter.isActive !== undefined) where.push(sql`is_active = ${filter.isActive ? 1 : 0}`);
  if (filter.isSuperuser !== undefined) where.push(sql`is_superuser = ${filter.isSuperuser ? 1 : 0}`);
  const condition = sql.join(where, sql` AND `);
  const { limit, offset } = pageWindow(page);
  const [rows, counted] = await batchRows<[UserRow, { total: number }]>(svc.db, [
    sql`SELECT ${USER_COLUMNS} FROM users WHERE ${condition} ORDER BY id LIMIT ${limit} OFFSET ${offset}`,
    sql`SELECT count(*) AS total FROM users WHERE ${condition}`,
  ]);
  return { users: rows.map(toSessionUser), total: counted[0]?.total ?? 0 };
}

/** One account; 404 `USER_NOT_FOUND` for an unknown id or the system account. */
export async function readUser(svc: Pick<Services, "db">, userId: number): Promise<SessionUser> {
  const rows = await svc.db.all<UserRow>(sql`SELECT ${USER_COLUMNS} FROM users WHERE id = ${userId} AND ${ADMINISTERED}`);
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
  const rows = await svc.db.all<{ username: string }>(sql`SELECT username FROM users WHERE id = ${userId} AND ${ADMINISTERED}`);
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
  const before = sql`SELECT ${USER_COLUMNS} FROM users WHERE id = ${userId} AND ${ADMINISTERED}`;
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
    sql`SELECT role FROM users WHERE id = ${userId} AND ${ADMINISTERED}`,
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
  const exists = sql`EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND ${ADMINISTERED})`;
  const [found] = await batchRows<[{ totp_enabled: number }, ...unknown[]]>(svc.db, [
    sql`SELECT (totp_enabled_at IS NOT NULL) AS totp_enabled FROM users WHERE id = ${userId} AND ${ADMINISTERED}`,
    ...totpRemovalStatements(userId),
    ...revocationStatements(userId, exists),
  ]);
  if (!found[0]) throw userNotFound();
  audit(svc.log, "admin.user.mfa_reset", { actor_id: actor.id, user_id: userId, was_enrolled: found[0].totp_enabled === 1 });
  audit(svc.log, "auth.sessions.revoked", { user_id: userId, reason: "admin_mfa_reset" });
}
