import { sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import type { RowOf } from "../../db/rows";
import type { oauthAccounts } from "../../db/schema";
import { audit } from "../../lib/audit";
import { ApiError, notFound } from "../../lib/problem";
import { queuePurge } from "../media/messages";
import { revokeLink } from "../oauth/revocation";
import { sendQuietly } from "../platform/email";
import type { RemovedMediaKeys } from "../products/records";
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
 * spend the caller's code: 404 for an unknown id or the system account, 409 for the last active
 * superuser. The deletion batch checks again (the guard is in every statement).
 */
export async function assertDeletable(svc: Pick<Services, "db">, userId: number): Promise<void> {
  const rows = await svc.db.all<{ allowed: number }>(
    sql`SELECT ${notLastSuperuser(userId)} AS allowed FROM users WHERE id = ${userId} AND is_system = 0`,
  );
  if (!rows[0]) throw userNotFound();
  if (rows[0].allowed !== 1) throw lastSuperuser();
}

type LinkRow = RowOf<typeof oauthAccounts, "provider" | "account_id" | "access_token_sealed" | "refresh_token_sealed">;

export interface AccountDeletion {
  userId: number;
  content: DeletionContent;
  /** The superuser deleting someone's account; absent for self-deletion. */
  actorId?: number;
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
 */
export async function deleteAccount(svc: Services, deletion: AccountDeletion): Promise<void> {
  const { userId, content } = deletion;
  await svc.hooks.accountDeleting(userId);
  const guard = notLastSuperuser(userId);
  const owned = sql`owner_id = ${userId} AND ${guard}`;
  const products =
    content === "anonymize"
      ? [
          sql`UPDATE users SET
              upload_file_count = upload_file_count + (SELECT upload_file_count FROM users WHERE id = ${userId}),
              upload_total_bytes = upload_total_bytes + (SELECT upload_total_bytes FROM users WHERE id = ${userId})
            WHERE is_system = 1 AND EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND is_system = 0) AND ${guard}`,
          sql`UPDATE products SET owner_id = (SELECT id FROM users WHERE is_system = 1) WHERE ${owned}`,
        ]
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

  audit(svc.log, "account.deleted", {
    user_id: userId,
    actor_id: deletion.actorId ?? userId,
    by: deletion.actorId === undefined ? "self" : "admin",
    content,
  });
  audit(svc.log, "auth.sessions.revoked", { user_id: userId, reason: "account_deleted" });
  await sendQuietly(svc, accountDeletedEmail(former.email, deletion.actorId !== undefined));
  const removed: RemovedMediaKeys = { images: [], files: [] };
  if (content === "delete")
    for (const row of rest[0] as { kind: "images" | "files"; storage_key: string }[]) removed[row.kind].push(row.storage_key);
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
  await queuePurge(svc, removed);
  await svc.events.publish({ type: "account.deleted", userId });
}
