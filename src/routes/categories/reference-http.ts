import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { dropNamespace } from "../../services/cache";

/**
 * Browser and proxy caching of public reference reads. Short, because an admin write clears the
 * KV copy at once but cannot reach copies held outside the Worker.
 */
export const REFERENCE_CACHE_CONTROL = "public, max-age=60";

/** What every public reference read route says about caching. */
export const CACHED_READ =
  "Public. Cached for an hour in the `reference-data` cache (`X-Cache: hit|miss`; a hit costs no database read), which " +
  "every admin write to reference data clears; browsers may keep an answer for a minute (`Cache-Control: public, max-age=60`).";

/** What every admin reference route says about who may call it. */
export const ADMIN_ONLY =
  "Superusers with TOTP only: anonymous 401, anyone else 403 `SUPERUSER_REQUIRED`, a superuser without TOTP 403 " +
  "`ADMIN_TOTP_REQUIRED`. Audited; clears the `reference-data` cache before it answers.";

export function markCacheable(c: Context<AppEnv>): void {
  c.header("Cache-Control", REFERENCE_CACHE_CONTROL);
}

/**
 * Clears the cached public reads after an admin write, before the write answers, so the writer's
 * next read sees the change. The write has happened either way: a KV failure is logged, not
 * answered with an error (the cache's TTL bounds how long a stale answer can live).
 */
export async function clearReferenceCache(c: Context<AppEnv>): Promise<void> {
  try {
    await dropNamespace(c.env.KV, "reference-data");
  } catch (error) {
    c.get("log").error("reference-data cache not cleared after a write", { error });
  }
}
