/**
 * Outbound HTTP policy: only HTTPS URLs on an allow-list, either exactly or under a path prefix
 * (an entry ending in `*`). Built once from configuration.
 */
export interface OutboundPolicy {
  readonly exact: ReadonlySet<string>;
  readonly prefixes: readonly string[];
}

export type OutboundFailure = "blocked" | "timeout" | "network";

/** Raised for a refused, timed-out or failed outbound request; `url` is logged without its query. */
export class OutboundError extends Error {
  override name = "OutboundError";
  constructor(
    readonly reason: OutboundFailure,
    readonly url: string,
    message: string,
  ) {
    super(message);
  }
}

export const DEFAULT_OUTBOUND_TIMEOUT_MS = 5_000;

/**
 * Builds a policy from entries such as `https://api.resend.com/emails` (exact) or
 * `https://api.pwnedpasswords.com/range/*` (prefix). A prefix must end at a `/` so that
 * `https://host/a*` cannot match `https://host/ab` by accident; entries are normalised by the URL parser.
 */
export function createOutboundPolicy(entries: readonly string[], options: { loopbackHttp?: boolean } = {}): OutboundPolicy {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const entry of entries) {
    const isPrefix = entry.endsWith("*");
    const url = new URL(isPrefix ? entry.slice(0, -1) : entry);
    const secure = url.protocol === "https:" || (options.loopbackHttp === true && isLoopbackHttp(url));
    if (!secure || url.username || url.password || url.hash) {
      throw new Error(`Outbound allow-list entry must be a plain https URL: ${url.origin}`);
    }
    if (isPrefix) {
      if (!url.pathname.endsWith("/") || url.search) {
        throw new Error(`Outbound allow-list prefix must end with '/': ${url.origin}${url.pathname}`);
      }
      prefixes.push(url.href);
    } else {
      exact.add(url.href);
    }
  }
  return { exact, prefixes };
}

/**
 * Plain http to this machine: only development lets such entries onto the list (the local
 * stand-ins of scripts/fake-providers.mjs); a URL still has to match an entry to be fetched.
 */
function isLoopbackHttp(url: URL): boolean {
  return url.protocol === "http:" && (url.hostname === "127.0.0.1" || url.hostname === "localhost");
}

// After a prefix, encoded separators or dots could climb out of it on a server that decodes them.
const ENCODED_ESCAPE = /%2f|%5c|%2e|\\/i;

/**
 * Whether `url` may be fetched under `policy`: HTTPS, no credentials, and either listed exactly
 * or under a prefix with no encoded `/`, `\` or `.` in what follows the prefix.
 */
export function isAllowedUrl(policy: OutboundPolicy, url: URL): boolean {
  if ((url.protocol !== "https:" && !isLoopbackHttp(url)) || url.username || url.password) return false;
  const href = url.href;
  if (policy.exact.has(href)) return true;
  return policy.prefixes.some((prefix) => href.startsWith(prefix) && !ENCODED_ESCAPE.test(href.slice(prefix.length)));
}

export interface OutboundOptions {
  timeoutMs?: number;
}

/**
 * The only way the service makes an outbound request. Refuses URLs outside the allow-list
 * before any network activity, never follows redirects (a 3xx comes back as is), and aborts after
 * `timeoutMs`.
 */
export async function safeFetch(
  policy: OutboundPolicy,
  target: string | URL,
  init: RequestInit = {},
  { timeoutMs = DEFAULT_OUTBOUND_TIMEOUT_MS }: OutboundOptions = {},
): Promise<Response> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new OutboundError("blocked", "(invalid URL)", "Outbound URL is not a valid URL");
  }
  const printable = `${url.origin}${url.pathname}`;
  if (!isAllowedUrl(policy, url)) {
    throw new OutboundError("blocked", printable, "Outbound URL is not on the allow-list");
  }
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  try {
    return await fetch(url, { ...init, redirect: "manual", signal });
  } catch (error) {
    if (timeout.aborted) {
      throw new OutboundError("timeout", printable, `Outbound request timed out after ${timeoutMs} ms`);
    }
    throw new OutboundError("network", printable, `Outbound request failed: ${(error as Error).name}`);
  }
}
