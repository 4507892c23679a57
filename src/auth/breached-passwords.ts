import type { AppConfig } from "../config";
import { BREACHED_PASSWORDS_RANGE_URL } from "../config";
import { toHex } from "../lib/encoding";
import type { Logger } from "../lib/logger";
import { safeFetch } from "../lib/outbound";

const RANGE_BASE = BREACHED_PASSWORDS_RANGE_URL.slice(0, -1);
/** Registration waits at most this long for the range service; then the check passes. */
export const BREACH_CHECK_TIMEOUT_MS = 1_500;
/** One warning line per skipped check: a machine without internet sees it on every registration. */
const SKIPPED = "breached-password check skipped (Pwned Passwords unavailable): the password was accepted, as the spec says";

/**
 * Whether a password appears in Have I Been Pwned's breach corpus, by the k-anonymity range
 * method: only the first 5 hex characters of its SHA-1 leave the service, and the answer (every
 * suffix with that prefix, padded with decoys of count 0) is searched locally. The check passes
 * (returns false) when the service is unreachable, slow or answers an error, as the spec requires;
 * that is logged as a warning.
 */
export async function isBreachedPassword(config: AppConfig, log: Logger, password: string): Promise<boolean> {
  const digest = toHex(new Uint8Array(await crypto.subtle.digest("SHA-1", new TextEncoder().encode(password))));
  const hash = digest.toUpperCase();
  const prefix = hash.slice(0, 5);
  const suffix = hash.slice(5);
  try {
    const response = await safeFetch(
      config.outbound,
      `${RANGE_BASE}${prefix}`,
      { headers: { "Add-Padding": "true" } },
      { timeoutMs: BREACH_CHECK_TIMEOUT_MS },
    );
    if (!response.ok) {
      await response.body?.cancel();
      log.warn(SKIPPED, { reason: `status ${response.status}` });
      return false;
    }
    for (const line of (await response.text()).split("\n")) {
      const [candidate, count] = line.trim().split(":");
      if (candidate === suffix) return Number(count) > 0;
    }
    return false;
  } catch (error) {
    log.warn(SKIPPED, { reason: (error as Error).message });
    return false;
  }
}
