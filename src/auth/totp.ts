import { hmac } from "@noble/hashes/hmac.js";
import { sha1 } from "@noble/hashes/legacy.js";
import { sha256, sha512 } from "@noble/hashes/sha2.js";
import { constantTimeEqual, toHex } from "../lib/encoding";

export const TOTP_DIGITS = 6;
export const TOTP_PERIOD_SECONDS = 30;
export const RECOVERY_CODE_COUNT = 10;

export type OtpHash = "SHA-1" | "SHA-256" | "SHA-512";

const HASHES = { "SHA-1": sha1, "SHA-256": sha256, "SHA-512": sha512 } as const;
const BASE32_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
// No 0/o, 1/l/i: recovery codes get read off paper and typed by hand.
const RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";
const RECOVERY_CODE_LENGTH = 10;
const RECOVERY_CODE_PATTERN = /^[a-hjkmnp-z2-9]{10}$/;
const TOTP_CODE_PATTERN = /^[0-9]{6}$/;

const encoder = new TextEncoder();

/** RFC 4226 HOTP value for `counter`, zero-padded to `digits` (default 6, HMAC-SHA-1). */
export function hotp(key: Uint8Array, counter: number, options: { digits?: number; hash?: OtpHash } = {}): string {
  const digits = options.digits ?? TOTP_DIGITS;
  const hash = HASHES[options.hash ?? "SHA-1"];
  if (!Number.isSafeInteger(counter) || counter < 0) throw new RangeError("HOTP counter must be a non-negative integer");
  // The 31-bit truncated value has at most 10 decimal digits.
  if (!Number.isInteger(digits) || digits < 6 || digits > 10) throw new RangeError("HOTP digits must be 6 to 10");
  if (!hash) throw new RangeError("Unsupported HOTP hash");

  // Split by arithmetic rather than bit operators, which would truncate counters past 2^32.
  const message = new Uint8Array(8);
  const view = new DataView(message.buffer);
  view.setUint32(0, Math.floor(counter / 2 ** 32));
  view.setUint32(4, counter % 2 ** 32);

  const mac = hmac(hash, key, message);
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary =
    ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return (binary % 10 ** digits).toString().padStart(digits, "0");
}

/** The RFC 6238 time step (30-second window) containing `nowSeconds`. */
export function totpStep(nowSeconds: number): number {
  return Math.floor(nowSeconds / TOTP_PERIOD_SECONDS);
}

/** RFC 6238 TOTP value at `nowSeconds`. */
export function totp(key: Uint8Array, nowSeconds: number, options?: { digits?: number; hash?: OtpHash }): string {
  return hotp(key, totpStep(nowSeconds), options);
}

/**
 * Checks an authenticator code against the current step and one step either side (clock drift).
 * Returns the matched step, to be stored as the new `lastAcceptedStep`, or null. Steps at or before
 * `lastAcceptedStep` are refused so an observed code cannot be replayed.
 */
export function matchTotp(
  key: Uint8Array,
  code: string,
  nowSeconds: number,
  lastAcceptedStep: number | null,
): number | null {
  const cleaned = code.replaceAll(" ", "");
  if (!TOTP_CODE_PATTERN.test(cleaned)) return null;
  const given = encoder.encode(cleaned);
  const step = totpStep(nowSeconds);

  // Every candidate is computed and compared, so the response time does not reveal which
  // window (if any) matched. The current step is preferred on the off chance two match.
  let accepted: number | null = null;
  for (const candidate of [step, step - 1, step + 1]) {
    if (candidate < 0) continue;
    const matches = constantTimeEqual(given, encoder.encode(hotp(key, candidate)));
    const fresh = lastAcceptedStep === null || candidate > lastAcceptedStep;
    if (matches && fresh && accepted === null) accepted = candidate;
  }
  return accepted;
}

/** A new 160-bit TOTP secret (the size RFC 4226 recommends for HMAC-SHA-1). */
export function newTotpSecret(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(20));
}

/** RFC 4648 base32 of `bytes`, upper case, without `=` padding (as authenticator apps expect). */
export function base32Encode(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32_ALPHABET[(buffer >> bits) & 31];
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/** Decodes RFC 4648 base32 in either case, with or without `=` padding; throws on anything else. */
export function base32Decode(text: string): Uint8Array {
  const upper = text.toUpperCase();
  if (!/^[A-Z2-7]*=*$/.test(upper)) throw new Error("Invalid base32");
  const body = upper.replace(/=+$/, "");
  // A final group of 1, 3 or 6 characters cannot come from whole bytes.
  if ([1, 3, 6].includes(body.length % 8)) throw new Error("Invalid base32 length");

  const out = new Uint8Array(Math.floor((body.length * 5) / 8));
  let buffer = 0;
  let bits = 0;
  let index = 0;
  for (const char of body) {
    buffer = ((buffer << 5) | BASE32_ALPHABET.indexOf(char)) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[index++] = (buffer >> bits) & 0xff;
    }
  }
  return out;
}

/** The `otpauth://` URI an authenticator app reads from the enrolment QR code. */
export function otpauthUri({ secret, issuer, account }: { secret: Uint8Array; issuer: string; account: string }): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  return (
    `otpauth://totp/${label}?secret=${base32Encode(secret)}&issuer=${encodeURIComponent(issuer)}` +
    `&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_PERIOD_SECONDS}`
  );
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
