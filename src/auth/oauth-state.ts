import { type DataKeyRing, openFieldText, sealField } from "../lib/data-encryption";
import { toBase64Url } from "../lib/encoding";
import type { OAuthFlow, OAuthProvider } from "./oauth-config";
import { fingerprint, randomToken } from "./tokens";

/** How long the provider round trip may take (decisions.md: OAuth state 10 minutes). */
export const OAUTH_STATE_TTL_SECONDS = 600;
/** The CSRF cookie of browser flows: set by the authorize route, checked by the callback. */
export const OAUTH_CSRF_COOKIE = "__Host-relab-oauth";

const CONTEXT = "oauth-state";

/** The signed-in account a link is for, with its revocation epoch when the link began. */
export interface LinkTarget {
  userId: number;
  tokensValidAfter: number;
}

/** What a state token carries through the provider and back. */
export interface OAuthState {
  provider: OAuthProvider;
  flow: OAuthFlow;
  /** The normalised redirect target the result goes to. */
  redirect: string;
  /** SHA-256 of the CSRF cookie for browser flows; null for flows that end in the native app. */
  csrfHash: string | null;
  /** The PKCE code verifier: only the service knows it, since the state is encrypted. */
  verifier: string;
  /** The account being linked (associate flow). */
  userId: number | null;
  /**
   * That account's revocation epoch when the link began: a sign-out everywhere or a password
   * change since then voids the link, as it voids the sessions.
   */
  tokensValidAfter: number | null;
  /** The app's own PKCE challenge (token flow): its claim must show the verifier. */
  appChallenge: string | null;
  /** Single-use id of this state. */
  nonce: string;
  /** Unix seconds. */
  expiresAt: number;
}

/**
 * A state token for a new authorization: the fields above, sealed with AES-256-GCM under the data
 * key (so it is both signed and secret: the PKCE verifier inside never reaches the provider), and,
 * when `withCsrf`, the CSRF cookie value it is bound to. The token flow, which ends in the native
 * app, has no cookie jar shared between the app's HTTP client and the system browser: it is bound
 * to the app by the app's own PKCE challenge instead, checked when the app claims the hand-off.
 */
export async function createState(
  dataKey: DataKeyRing,
  fields: Pick<OAuthState, "provider" | "flow" | "redirect" | "userId" | "tokensValidAfter" | "appChallenge">,
  withCsrf: boolean,
): Promise<{ state: string; csrf: string | null; challenge: string }> {
  const csrf = withCsrf ? randomToken() : null;
  const verifier = randomToken();
  const state: OAuthState = {
    ...fields,
    csrfHash: csrf === null ? null : fingerprint(csrf),
    verifier,
    nonce: randomToken(),
    expiresAt: Math.floor(Date.now() / 1000) + OAUTH_STATE_TTL_SECONDS,
  };
  return { state: await sealField(dataKey, JSON.stringify(state), CONTEXT), csrf, challenge: await pkceChallenge(verifier) };
}

/** The state a callback received, when it opens, is unexpired, and belongs to `provider` and `flow`; null otherwise. */
export async function openState(
  dataKey: DataKeyRing,
  sealed: string,
  provider: OAuthProvider,
  flow: OAuthFlow,
): Promise<OAuthState | null> {
  let state: OAuthState;
  try {
    state = JSON.parse(await openFieldText(dataKey, sealed, CONTEXT)) as OAuthState;
  } catch {
    return null;
  }
  if (state.provider !== provider || state.flow !== flow) return null;
  if (state.expiresAt <= Math.floor(Date.now() / 1000)) return null;
  return state;
}

/** Whether the browser's CSRF cookie is the one the state was made for (always true for flows without one). */
export function csrfMatches(state: OAuthState, cookie: string | undefined): boolean {
  if (state.csrfHash === null) return true;
  return cookie !== undefined && fingerprint(cookie) === state.csrfHash;
}

/** RFC 7636 S256: base64url(SHA-256(verifier)). */
export async function pkceChallenge(verifier: string): Promise<string> {
  return toBase64Url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
}

/** `Set-Cookie` for the CSRF cookie, living as long as the state. */
export function csrfCookie(value: string): string {
  return `${OAUTH_CSRF_COOKIE}=${value}; Max-Age=${OAUTH_STATE_TTL_SECONDS}; Path=/; Secure; HttpOnly; SameSite=Lax`;
}

/** `Set-Cookie` that drops the CSRF cookie once the callback used it. */
export function clearedCsrfCookie(): string {
  return `${OAUTH_CSRF_COOKIE}=; Max-Age=0; Path=/; Secure; HttpOnly; SameSite=Lax`;
}
