import { eq } from "drizzle-orm";
import { hashPassword } from "../auth/password";
import type { AppConfig } from "../config";
import type { Db } from "../db/client";
import { users } from "../db/schema";
import { canonicalEmail, normalizeEmail } from "../lib/email-address";
import type { Logger } from "../lib/logger";

export const BOOTSTRAP_USERNAME = "admin";

export type BootstrapOutcome = "disabled" | "exists" | "created" | "conflict";

/**
 * Creates the configured superuser (verified, role `lab`, no TOTP) when none exists. An address
 * or username that already belongs to an ordinary account is never promoted: that would hand
 * superuser powers to whoever registered it first.
 */
export async function ensureBootstrapSuperuser(
  db: Db,
  config: AppConfig,
  log: Logger,
): Promise<BootstrapOutcome> {
  if (!config.bootstrap) return "disabled";
  if (await superuserExists(db)) return "exists";

  const email = normalizeEmail(config.bootstrap.email);
  const inserted = await db
    .insert(users)
    .values({
      email,
      emailCanonical: canonicalEmail(email),
      username: BOOTSTRAP_USERNAME,
      hashedPassword: hashPassword(config.bootstrap.password, config.argon2),
      isVerified: true,
      isSuperuser: true,
      role: "lab",
    })
    .onConflictDoNothing()
    .returning({ id: users.id });

  if (inserted.length === 0) {
    // Another isolate may have created the superuser between our check and our insert.
    if (await superuserExists(db)) return "exists";
    log.error("bootstrap superuser not created: email or username already taken by an ordinary account", {
      email,
      username: BOOTSTRAP_USERNAME,
    });
    return "conflict";
  }
  log.info("bootstrap superuser created", { user_id: inserted[0]!.id, email });
  return "created";
}

async function superuserExists(db: Db): Promise<boolean> {
  const rows = await db.select({ id: users.id }).from(users).where(eq(users.isSuperuser, true)).limit(1);
  return rows.length > 0;
}
