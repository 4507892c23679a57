import { sha256 } from "@noble/hashes/sha2.js";
// The slim build computes HMACs with @noble/hashes, which the service already depends on: the
// same synchronous pure-JS code in workerd and in Node (the default build bundles a second copy
// of noble, and its Node build uses node:crypto, which workerd lacks without nodejs_compat).
import { HOTP, Secret, TOTP, URI } from "otpauth/slim";
import { toHex } from "../lib/encoding";

export const TOTP_DIGITS = 6;
export const TOTP_PERIOD_SECONDS = 30;
export const RECOVERY_CODE_COUNT = 10;

export type OtpHash = "SHA-1" | "SHA-256" | "SHA-512";

const ALGORITHMS: Record<OtpHash, string> = { "SHA-1": "SHA1", "SHA-256": "SHA256", "SHA-512": "SHA512" };
/** What authenticator apps assume when the URI says nothing else; the service uses nothing else. */
const TOTP_PARAMETERS = { algorithm: "SHA1", digits: TOTP_DIGITS, period: TOTP_PERIOD_SECONDS } as const;
// No 0/o, 1/l/i: recovery codes get read off paper and typed by hand.
const RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";
const RECOVERY_CODE_LENGTH = 10;
const RECOVERY_CODE_PATTERN = /^[a-hjkmnp-z2-9]{10}$/;
const TOTP_CODE_PATTERN = /^[0-9]{6}$/;

const encoder = new TextEncoder();

// otpauth keeps the whole ArrayBuffer of what it is given: a copy, so a seed that is a view into
// a larger buffer (an opened sealed field) contributes its own bytes only.
const secretOf = (key: Uint8Array) => new Secret({ buffer: key.slice().buffer });
// Whole milliseconds, so that a step boundary is not missed by a rounding error of `seconds * 1000`.
const millis = (nowSeconds: number) => Math.round(nowSeconds * 1000);

/** RFC 4226 HOTP value for `counter`, zero-padded to `digits` (default 6, HMAC-SHA-1). */
export function hotp(key: Uint8Array, counter: number, options: { digits?: number; hash?: OtpHash } = {}): string {
  const digits = options.digits ?? TOTP_DIGITS;
  const algorithm = ALGORITHMS[options.hash ?? "SHA-1"];
  // otpauth takes any number; these would give a value that is no HOTP.
  if (!Number.isSafeInteger(counter) || counter < 0) throw new RangeError("HOTP counter must be a non-negative integer");
  // The 31-bit truncated value has at most 10 decimal digits.
  if (!Number.isInteger(digits) || digits < 6 || digits > 10) throw new RangeError("HOTP digits must be 6 to 10");
  if (!algorithm) throw new RangeError("Unsupported HOTP hash");
  return HOTP.generate({ secret: secretOf(key), algorithm, digits, counter });
}

/** The RFC 6238 time step (30-second window) containing `nowSeconds`. */
export function totpStep(nowSeconds: number): number {
  return TOTP.counter({ period: TOTP_PERIOD_SECONDS, timestamp: millis(nowSeconds) });
}

/** RFC 6238 TOTP value at `nowSeconds`. */
export function totp(key: Uint8Array, nowSeconds: number, options: { digits?: number; hash?: OtpHash } = {}): string {
  return hotp(key, totpStep(nowSeconds), options);
}

/**
 * Checks an authenticator code against the current step and one step either side (clock drift).
 * Returns the matched step, to be stored as the new `lastAcceptedStep`, or null. Steps at or before
 * `lastAcceptedStep` are refused so an observed code cannot be replayed.
 */
export function matchTotp(key: Uint8Array, code: string, nowSeconds: number, lastAcceptedStep: number | null): number | null {
  const cleaned = code.replaceAll(" ", "");
  if (!TOTP_CODE_PATTERN.test(cleaned)) return null;
  const timestamp = millis(nowSeconds);
  // otpauth compares in constant time per step and tries the current step, then the one before,
  // then the one after, stopping at a match: only a caller who already holds a valid code could
  // time which step it was. The replay guard is ours: a match at or before the last accepted step
  // is refused, even in the one-in-a-million case that another step in the window shows the same
  // digits (the user then waits for the next code).
  const delta = TOTP.validate({ token: cleaned, secret: secretOf(key), ...TOTP_PARAMETERS, timestamp, window: 1 });
  if (delta === null) return null;
  const step = TOTP.counter({ period: TOTP_PERIOD_SECONDS, timestamp }) + delta;
  // At the very start of time there is no step before the current one.
  if (step < 0) return null;
  if (lastAcceptedStep !== null && step <= lastAcceptedStep) return null;
  return step;
}

/** A new 160-bit TOTP secret (the size RFC 4226 recommends for HMAC-SHA-1). */
export function newTotpSecret(): Uint8Array {
  return new Secret({ size: 20 }).bytes;
}

/** RFC 4648 base32 of `bytes`, upper case, without `=` padding (as authenticator apps expect). */
export function base32Encode(bytes: Uint8Array): string {
  return secretOf(bytes).base32;
}

/** Decodes RFC 4648 base32 in either case, with or without `=` padding; throws on anything else. */
export function base32Decode(text: string): Uint8Array {
  // otpauth also takes spaces, `=` anywhere at the end and lengths no whole bytes can give.
  if (!/^[A-Za-z2-7]*=*$/.test(text)) throw new Error("Invalid base32");
  // A final group of 1, 3 or 6 characters cannot come from whole bytes.
  if ([1, 3, 6].includes(text.replace(/=+$/, "").length % 8)) throw new Error("Invalid base32 length");
  return Secret.fromBase32(text).bytes;
}

/** The `otpauth://` URI an authenticator app reads from the enrolment QR code. */
export function otpauthUri({ secret, issuer, account }: { secret: Uint8Array; issuer: string; account: string }): string {
  return URI.stringify(new TOTP({ issuer, label: account, secret: secretOf(secret), ...TOTP_PARAMETERS }));
}

/** `count` distinct one-time recovery codes, shown as `xxxxx-xxxxx`. */
export function newRecoveryCodes(count: number = RECOVERY_CODE_COUNT): string[] {
  if (!Number.isInteger(count) || count < 0) throw new RangeError("Recovery code count must be a non-negative integer");
  const codes = new Set<string>();
  while (codes.size < count) {
    const code = randomRecoveryChars(RECOVERY_CODE_LENGTH);
    codes.add(`${code.slice(0, 5)}-${code.slice(5)}`);
  }
  return [...codes];
}

// Bytes at or above the largest multiple of the alphabet size are thrown away, so that `% 31`
// does not favour the first letters.
function randomRecoveryChars(length: number): string {
  const size = RECOVERY_ALPHABET.length;
  const limit = 256 - (256 % size);
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte >= limit) continue;
      out += RECOVERY_ALPHABET[byte % size];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Canonical form of a typed recovery code (case, spaces and hyphens ignored), or null if it cannot be one. */
export function normalizeRecoveryCode(input: string): string | null {
  const normalized = input.toLowerCase().replace(/[ -]/g, "");
  return RECOVERY_CODE_PATTERN.test(normalized) ? normalized : null;
}

/** SHA-256 hex of a normalized recovery code, for storage and lookup. */
export function recoveryCodeHash(normalized: string): string {
  // A fast unsalted hash is enough: each code carries ~49 bits from a CSPRNG, too many to
  // enumerate offline, unlike the low-entropy passwords that need Argon2id.
  return toHex(sha256(encoder.encode(normalized)));
}

/** Whether `input` looks like an authenticator code (6 digits) rather than a recovery code. */
export function isTotpShaped(input: string): boolean {
  return TOTP_CODE_PATTERN.test(input.replaceAll(" ", ""));
}
