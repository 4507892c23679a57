import { type SQL, sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import type { RowOf } from "../../db/rows";
import type { oauthAccounts } from "../../db/schema";
import { audit } from "../../lib/audit";
import { ApiError, notFound } from "../../lib/problem";
import { hideAccountStatements, newJobId, sliceSizes, startDeletionJob } from "../deletions/jobs";
import { queuePurge } from "../media/messages";
import { revokeLink } from "../oauth/revocation";
import { sendQuietly } from "../platform/email";
import type { RemovedMediaKeys } from "../products/records";
import { revocationStatements } from "../sign-in/sessions";
import { accountDeletedEmail } from "./emails";

/** What happens to a deleted account's products: moved to the anonymous system account, or deleted with it. */
export const DELETION_CONTENT = ["anonymize", "delete"] as const;
export type DeletionContent = (typeof DELETION_CONTENT)[number];

export function userNotFound(): ApiError {
  return notFound("No user has this id.", "USER_NOT_FOUND");
}

export function lastSuperuser(): ApiError {
  return new ApiError(409, {
    code: "LAST_SUPERUSER",
    detail: "This is the last active superuser: make another account a superuser before removing this one.",
  });
}

/**
 * SQL that holds unless user `userId` is the last active superuser. Every statement of a removal
 * carries it, so the check and the removal are one atomic batch: two superusers deleting each
 * other at once cannot both succeed.
 */
export function notLastSuperuser(userId: number) {
  return sql`(NOT EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND is_superuser = 1 AND is_active = 1)
    OR EXISTS (SELECT 1 FROM users WHERE id <> ${userId} AND is_superuser = 1 AND is_active = 1))`;
}

/**
 * The refusals a deletion can meet, checked before the step-up so that a 404 or 409 does not
 * spend the caller's code: 404 for an unknown id or the system account (or an account already
 * being deleted), 409 for the last active superuser. The deletion batch checks again (the guard
 * is in every statement). Returns the account's records, counted up to the most a deletion in
 * the request may remove plus one (a bounded read): more, and the deletion becomes a job.
 */
export async function assertDeletable(svc: Pick<Services, "db" | "config">, userId: number): Promise<{ records: number }> {
  const limit = sliceSizes(svc.config.deletionSliceRecords).reown + 1;
  const rows = await svc.db.all<{ allowed: number; records: number }>(
    // Raw: the last-superuser rule and a count bounded by its own LIMIT, in one read.
    sql`SELECT ${notLastSuperuser(userId)} AS allowed, (SELECT count(*) FROM (SELECT 1 FROM products WHERE owner_id = ${userId} LIMIT ${limit})) AS records
      FROM users WHERE id = ${userId} AND is_system = 0`,
  );
  if (!rows[0]) throw userNotFound();
  if (rows[0].allowed !== 1) throw lastSuperuser();
  return { records: rows[0].records };
}

type LinkRow = RowOf<typeof oauthAccounts, "provider" | "account_id" | "access_token_sealed" | "refresh_token_sealed">;

export interface AccountDeletion {
  userId: number;
  content: DeletionContent;
  /** The superuser deleting someone's account; absent for self-deletion. */
  actorId?: number;
  /** The account's records as `assertDeletable` counted them. */
  records: number;
}

/**
 * Deletes an account, for both routes (self-deletion and an administrator's), after their checks.
 * First the enabled plugins finish what needs the account (`hooks.accountDeleting`: the camera
 * plugin ends its live streams while the video link still works). Then one batch: its products
 * move to the inactive system account (their text and file names stay; the upload usage moves
 * with them) or, with `content: "delete"`, are deleted with their components, bills of materials
 * and videos; then the user row goes, and with it (foreign keys, ON DELETE CASCADE) every refresh
 * token, recovery code, login challenge, idempotency record and linked sign-in, so every session
 * ends at once. The email address and username are free again afterwards. 404 for an unknown id
 * or the system account; 409 for the last active superuser. After the commit: a notice to the
 * former address, the linked grants revoked at their providers, the deleted media's objects
 * queued for purging, and `account.deleted` published (plugins clean up what they keep).
 *
 * An account with more records than one batch may move or delete (`assertDeletable`'s count
 * against `sliceSizes`) is closed in the batch instead, and its records go through a deletion
 * job (`closeAccount`).
 */
export async function deleteAccount(svc: Services, deletion: AccountDeletion): Promise<void> {
  const { userId, content } = deletion;
  await svc.hooks.accountDeleting(userId);
  const sizes = sliceSizes(svc.config.deletionSliceRecords);
  if (deletion.records > (content === "anonymize" ? sizes.reown : sizes.purge)) {
    await closeAccount(svc, deletion);
    return;
  }
  // Raw, every statement of this batch: each carries the last-superuser guard, so a race with
  // another administrator's change leaves nothing half-done.
  const guard = notLastSuperuser(userId);
  const owned = sql`owner_id = ${userId} AND ${guard}`;
  const products =
    content === "anonymize"
      ? [moveUsageToSystem(userId, guard), sql`UPDATE products SET owner_id = (SELECT id FROM users WHERE is_system = 1) WHERE ${owned}`]
      : [
          // The storage keys of the media that goes with the products, for their objects to be purged.
          sql`SELECT 'images' AS kind, i.storage_key FROM images i JOIN products p ON p.id = i.product_id WHERE p.owner_id = ${userId} AND ${guard}
              UNION SELECT 'files', f.storage_key FROM files f JOIN products p ON p.id = f.product_id WHERE p.owner_id = ${userId} AND ${guard}`,
          sql`DELETE FROM products WHERE ${owned}`,
        ];
  const [found, links, ...rest] = await batchRows<[{ email: string }, LinkRow, ...unknown[]]>(svc.db, [
    sql`SELECT email FROM users WHERE id = ${userId} AND is_system = 0`,
    // Linked sign-ins go with the user row too; their grants are revoked at the provider after.
    sql`SELECT provider, account_id, access_token_sealed, refresh_token_sealed FROM oauth_accounts WHERE user_id = ${userId}`,
    ...products,
    sql`DELETE FROM users WHERE id = ${userId} AND is_system = 0 AND ${guard} RETURNING id`,
  ]);
  const former = found[0];
  if (!former) throw userNotFound();
  if ((rest[rest.length - 1] as unknown[]).length === 0) throw lastSuperuser();

  const removed: RemovedMediaKeys = { images: [], files: [] };
  if (content === "delete")
    for (const row of rest[0] as { kind: "images" | "files"; storage_key: string }[]) removed[row.kind].push(row.storage_key);
  await afterClosing(svc, deletion, former.email, links);
  await queuePurge(svc, removed);
  await svc.events.publish({ type: "account.deleted", userId });
}

/** The upload usage of `userId` added to the system account's, which holds its products from now on. */
function moveUsageToSystem(userId: number, guard: SQL): SQL {
  // Raw: one account's counters added to another's, under the caller's guard.
  return sql`UPDATE users SET
      upload_file_count = upload_file_count + (SELECT upload_file_count FROM users WHERE id = ${userId}),
      upload_total_bytes = upload_total_bytes + (SELECT upload_total_bytes FROM users WHERE id = ${userId})
    WHERE is_system = 1 AND EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND is_system = 0) AND ${guard}`;
}

/**
 * The deletion of an account too large for one batch. One batch closes the account for good, as
 * a deleted one is to everyone: it can no longer sign in (every session and refresh token ended,
 * no password, inactive), its address and username are free (the row keeps placeholders that no
 * sign-up can take), it has accepted no contributor terms (it leaves future releases), its profile
 * is hidden, and it is listed nowhere (`is_system = 2`: not an ordinary account, and not the
 * system account either). With `delete`, its first base products are hidden in the same batch
 * (the rest by the job's first slices: `hideAccountStatements`); with `anonymize`, its upload usage
 * moves to the system account, and its products, which show no owner from here on (the profile is
 * hidden, as the system account's is), are moved by the job. Then a deletion job removes or moves
 * its records in slices and deletes the row at the end (src/services/deletions/jobs.ts).
 */
async function closeAccount(svc: Services, deletion: AccountDeletion): Promise<void> {
  const { userId, content } = deletion;
  const guard = notLastSuperuser(userId);
  const jobId = newJobId();
  // Raw, every statement of this batch: each holds only if the job row went in (`started`), which
  // the last-superuser guard decides.
  const started = sql`EXISTS (SELECT 1 FROM deletion_jobs WHERE id = ${jobId})`;
  const [found, links, ...rest] = await batchRows<[{ email: string }, LinkRow, ...unknown[]]>(svc.db, [
    sql`SELECT email FROM users WHERE id = ${userId} AND is_system = 0`,
    sql`SELECT provider, account_id, access_token_sealed, refresh_token_sealed FROM oauth_accounts WHERE user_id = ${userId}`,
    ...(content === "anonymize" ? [moveUsageToSystem(userId, guard)] : []),
    sql`INSERT INTO deletion_jobs (id, kind, user_id, content, actor_id)
      SELECT ${jobId}, 'account', ${userId}, ${content}, ${deletion.actorId ?? null}
      WHERE EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND is_system = 0) AND ${guard}`,
    ...(content === "delete" ? hideAccountStatements(jobId, userId, sliceSizes(svc.config.deletionSliceRecords).hide, started) : []),
    // What the account could still be used by: its sessions, codes, challenges, stored answers and links.
    ...["recovery_codes", "mfa_challenges", "idempotency_keys", "oauth_accounts", "oauth_handoffs"].map(
      (table) => sql`DELETE FROM ${sql.raw(table)} WHERE user_id = ${userId} AND ${started}`,
    ),
    ...revocationStatements(userId, started),
    sql`UPDATE users SET is_system = 2, is_active = 0, is_verified = 0, is_superuser = 0, role = 'contributor',
        email = '~deleting~' || id, email_canonical = '~deleting~' || id, username = '~deleting~' || id, hashed_password = NULL,
        totp_secret = NULL, totp_enabled_at = NULL, totp_last_step = NULL, recovery_codes_generation = NULL,
        terms_accepted_version = NULL, terms_accepted_at = NULL, profile_visibility = 'private',
        upload_file_count = 0, upload_total_bytes = 0, updated_at = unixepoch()
      WHERE id = ${userId} AND is_system = 0 AND ${started} RETURNING id`,
  ]);
  const former = found[0];
  if (!former) throw userNotFound();
  if ((rest[rest.length - 1] as unknown[]).length === 0) throw lastSuperuser();
  await afterClosing(svc, deletion, former.email, links);
  await startDeletionJob(svc, jobId, { kind: "account", user_id: userId, content });
}

/** What follows a deletion's commit either way: the audit lines, the notice to the former address, the linked grants revoked. */
async function afterClosing(svc: Services, deletion: AccountDeletion, formerEmail: string, links: LinkRow[]): Promise<void> {
  const { userId } = deletion;
  audit(svc.log, "account.deleted", {
    user_id: userId,
    actor_id: deletion.actorId ?? userId,
    by: deletion.actorId === undefined ? "self" : "admin",
    content: deletion.content,
  });
  audit(svc.log, "auth.sessions.revoked", { user_id: userId, reason: "account_deleted" });
  await sendQuietly(svc, accountDeletedEmail(formerEmail, deletion.actorId !== undefined));
  await Promise.all(
    links.map((link) =>
      revokeLink(svc, {
        provider: link.provider,
        accountId: link.account_id,
        accessTokenSealed: link.access_token_sealed,
        refreshTokenSealed: link.refresh_token_sealed,
      }),
    ),
  );
}
