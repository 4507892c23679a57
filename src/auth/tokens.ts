import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { type JWTPayload, jwtVerify, SignJWT } from "jose";
import { LRUCache } from "lru-cache";
import { constantTimeEqual, toBase64Url, toHex } from "../lib/encoding";

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
/** Inactivity lifetime of a refresh token: each refresh starts a new one (capped by the session). */
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/** Absolute lifetime of a session, fixed at login; refreshing never extends it. */
export const SESSION_TTL_SECONDS = 30 * 24 * 3600;
export const RESET_TOKEN_TTL_SECONDS = 3600;
export const VERIFY_TOKEN_TTL_SECONDS = 24 * 3600;

type Purpose = "access" | "verify" | "reset" | "limit";
type Keys = Record<Purpose, Uint8Array>;

const encoder = new TextEncoder();
const derived = new Map<string, Keys>();

// One key per token kind, derived from the one configured secret, so that a token made for one
// purpose can never be accepted as another.
function keysFor(secret: string): Keys {
  let keys = derived.get(secret);
  if (!keys) {
    const derive = (purpose: Purpose) => hmac(sha256, encoder.encode(secret), encoder.encode(`relab/${purpose}/v1`));
    keys = { access: derive("access"), verify: derive("verify"), reset: derive("reset"), limit: derive("limit") };
    derived.set(secret, keys);
  }
  return keys;
}

function mac(key: Uint8Array, message: string): Uint8Array {
  return hmac(sha256, key, encoder.encode(message));
}

/** What an access token says: who, which session, and when it was issued (milliseconds). */
export interface AccessClaims {
  userId: number;
  sessionId: string;
  issuedAtMs: number;
  /** Unix seconds. */
  expiresAt: number;
}

const ACCESS_HEADER = { alg: "HS256", typ: "JWT" } as const;
const accessKeys = new Map<string, Promise<CryptoKey>>();

// The access key as a WebCrypto key, imported once per secret: jose would import raw bytes anew on
// every call. Neither extractable nor usable for anything but HMAC-SHA-256.
function accessKeyFor(secret: string): Promise<CryptoKey> {
  let key = accessKeys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", keysFor(secret).access, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    accessKeys.set(secret, key);
  }
  return key;
}

/**
 * Signs an access token: a compact HS256 JWT whose `iat` keeps millisecond precision (a
 * fractional NumericDate, which RFC 7519 allows), so that a revocation within the same second as
 * a login still tells the two apart.
 */
export async function signAccessToken(secret: string, claims: AccessClaims): Promise<string> {
  return new SignJWT({ sid: claims.sessionId })
    .setProtectedHeader(ACCESS_HEADER)
    .setSubject(String(claims.userId))
    .setIssuedAt(claims.issuedAtMs / 1000)
    .setExpirationTime(claims.expiresAt)
    .sign(await accessKeyFor(secret));
}

// The one spelling of a 32-byte HMAC-SHA-256 in unpadded base64url: the last of its 43 characters
// carries 4 bits and 2 spare ones, which must be zero. Base64 decoders (jose's among them) ignore
// spare bits, so without this four strings would verify as one token.
const CANONICAL_SIGNATURE = /\.[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

/**
 * The secrets a token may be signed with: the current one first, then the previous one while a
 * rotation keeps it (`AUTH_TOKEN_SECRET_PREVIOUS`, config `tokenSecrets`). A bare string is one.
 */
export type VerifyingSecrets = string | readonly string[];

const secretList = (secrets: VerifyingSecrets): readonly string[] => (typeof secrets === "string" ? [secrets] : secrets);

/**
 * The claims of a well-signed, unexpired access token, or null. jose checks the signature with
 * the access key of each secret given here (never one the header names) and only under HS256, so
 * `none` and every other algorithm are refused, and refuses an `exp` at or before `nowSeconds`.
 * A token signed with a previous secret verifies until it expires, as long as that secret is
 * passed. Whether the session was revoked since `iat` is for the caller to check
 * (`userForAccessToken`).
 */
export async function readAccessToken(secrets: VerifyingSecrets, token: string, nowSeconds: number): Promise<AccessClaims | null> {
  for (const secret of secretList(secrets)) {
    const verified = verifiedTokens(secret);
    const known = verified.get(token);
    if (known) return known.expiresAt > nowSeconds ? known : null;
    const claims = await verifyAccessToken(secret, token, nowSeconds);
    if (claims) {
      verified.set(token, claims);
      return claims;
    }
  }
  return null;
}

// Tokens this isolate has verified, per signing secret: a client sends the same access token for
// up to 15 minutes, and its signature need not be checked on every request (the rate limiter and
// the route both read it). Only well-signed tokens are kept, so forged ones cannot fill it; expiry
// is checked on every use; revocation is the database's to say, as before (`userForAccessToken`).
const verifiedBySecret = new Map<string, LRUCache<string, AccessClaims>>();

function verifiedTokens(secret: string): LRUCache<string, AccessClaims> {
  let verified = verifiedBySecret.get(secret);
  if (!verified) {
    verified = new LRUCache({ max: 5_000 });
    verifiedBySecret.set(secret, verified);
  }
  return verified;
}

async function verifyAccessToken(secret: string, token: string, nowSeconds: number): Promise<AccessClaims | null> {
  if (!CANONICAL_SIGNATURE.test(token)) return null;
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, await accessKeyFor(secret), {
      algorithms: ["HS256"],
      typ: "JWT",
      requiredClaims: ["sub", "sid", "iat", "exp"],
      currentDate: new Date(nowSeconds * 1000),
    }));
  } catch {
    // Malformed, forged, expired or of another kind: jose's errors say which, the caller needs only no.
    return null;
  }
  const { sub, sid, iat, exp } = payload;
  if (typeof sub !== "string" || !/^[1-9]\d{0,15}$/.test(sub)) return null;
  if (typeof sid !== "string" || typeof iat !== "number" || typeof exp !== "number") return null;
  return { userId: Number(sub), sessionId: sid, issuedAtMs: Math.round(iat * 1000), expiresAt: exp };
}

/**
 * A keyed digest (HMAC-SHA-256, hex) of an identifier such as a canonical email address: rate-limit
 * counters are named by it, so the counter store never holds the address, and without the secret
 * no one can test which addresses have counters.
 */
export function keyedDigest(secret: string, value: string): string {
  return toHex(mac(keysFor(secret).limit, value));
}

/** 32 random bytes, URL-safe: refresh tokens, session ids. */
export function randomToken(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
}

/** SHA-256 of a secret token, in hex: the only form in which refresh tokens are stored. */
export function fingerprint(token: string): string {
  return toHex(sha256(encoder.encode(token)));
}

/**
 * A token for an email link: `<user id>.<expiry>.<mac>`. Nothing is stored; the MAC also covers
 * `binding` (the address being verified, or the current password hash for a reset), so the token
 * stops working as soon as that value changes: a reset cannot be replayed after it succeeded.
 * Not a JWT on purpose: no one else reads it, its MAC covers a value the token does not carry,
 * and it must stay short enough to survive being copied out of an email.
 */
export function signLinkToken(secret: string, purpose: "verify" | "reset", userId: number, expiresAt: number, binding: string): string {
  const head = `${userId}.${expiresAt}`;
  return `${head}.${toBase64Url(mac(keysFor(secret)[purpose], `${head}.${binding}`))}`;
}

/** The user id and expiry a link token names, before it is checked; null when malformed. */
export function parseLinkToken(token: string): { userId: number; expiresAt: number } | null {
  const match = /^([1-9]\d{0,15})\.(\d{1,12})\.[A-Za-z0-9_-]{43}$/.exec(token);
  return match ? { userId: Number(match[1]), expiresAt: Number(match[2]) } : null;
}

/**
 * Whether a link token is unexpired and was made for `purpose` and the current `binding`, with one
 * of `secrets` (a previous secret's links keep working until they expire, as access tokens do).
 */
export function checkLinkToken(
  secrets: VerifyingSecrets,
  purpose: "verify" | "reset",
  token: string,
  binding: string,
  nowSeconds: number,
): boolean {
  const parsed = parseLinkToken(token);
  if (!parsed || parsed.expiresAt <= nowSeconds) return false;
  // Every secret is tried, whichever matches, so the time taken does not say which one did.
  let matched = false;
  for (const secret of secretList(secrets)) {
    const expected = signLinkToken(secret, purpose, parsed.userId, parsed.expiresAt, binding);
    if (constantTimeEqual(encoder.encode(expected), encoder.encode(token))) matched = true;
  }
  return matched;
}
