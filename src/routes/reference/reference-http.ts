import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { clearAfterWrite } from "../../services/caching/kv-cache";

/**
 * Browser and proxy caching of public reference reads. Short, because an admin write clears the
 * KV copy at once but cannot reach copies held outside the Worker.
 */
export const REFERENCE_CACHE_CONTROL = "public, max-age=60";

/** What every public reference read route says about caching. */
export const CACHED_READ =
  "Public. Cached for an hour in the `reference-data` cache (`X-Cache: hit|miss`; a hit costs no database read), which " +
  "every admin write to reference data clears; browsers may keep an answer for a minute (`Cache-Control: public, max-age=60`).";

/** Lets browsers and proxies keep a public reference read for a minute. */
export function markCacheable(c: Context<AppEnv>): void {
  c.header("Cache-Control", REFERENCE_CACHE_CONTROL);
}

/** Clears the cached public reads after an admin write, before it answers (`clearAfterWrite`: a KV failure is logged). */
export async function clearReferenceCache(c: Context<AppEnv>): Promise<void> {
  await clearAfterWrite(c.get("services"), "reference-data");
}
