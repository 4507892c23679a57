import { eq } from "drizzle-orm";
import { hashPassword } from "../../auth/password";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { users } from "../../db/schema";
import { canonicalEmail, normalizeEmail } from "../../lib/email-address";

export const BOOTSTRAP_USERNAME = "admin";

export type BootstrapOutcome = "disabled" | "exists" | "created" | "conflict";

/**
 * Creates the configured superuser (verified, role `lab`, no TOTP) when none exists. An address
 * or username that already belongs to an ordinary account is never promoted: that would hand
 * superuser powers to whoever registered it first.
 */
export async function ensureBootstrapSuperuser(svc: Pick<Services, "db" | "config" | "log">): Promise<BootstrapOutcome> {
  const { config, log } = svc;
  if (!config.bootstrap) return "disabled";
  if (await superuserExists(svc)) return "exists";

  const email = normalizeEmail(config.bootstrap.email);
  // Through the counting client, not the builder's own `returning()` run (unmetered, docs/conventions.md).
  const inserted = await svc.db.all<{ id: number }>(
    svc.db
      .insert(users)
      .values({
        email,
        email_canonical: canonicalEmail(email),
        username: BOOTSTRAP_USERNAME,
        hashed_password: hashPassword(config.bootstrap.password, config.argon2),
        is_verified: true,
        is_superuser: true,
        role: "lab",
      })
      .onConflictDoNothing()
      .returning({ id: users.id }),
  );

  if (inserted.length === 0) {
    // Another isolate may have created the superuser between our check and our insert.
    if (await superuserExists(svc)) return "exists";
    log.error("bootstrap superuser not created: email or username already taken by an ordinary account", {
      email,
      username: BOOTSTRAP_USERNAME,
    });
    return "conflict";
  }
  log.info("bootstrap superuser created", { user_id: inserted[0]!.id, email });
  return "created";
}

async function superuserExists(svc: Pick<Services, "db">): Promise<boolean> {
  const [rows] = await batchRows<[{ id: number }]>(svc.db, [
    svc.db.select({ id: users.id }).from(users).where(eq(users.is_superuser, true)).limit(1),
  ]);
  return rows.length > 0;
}
