import { argon2id } from "@noble/hashes/argon2.js";
import { randomBytes } from "@noble/hashes/utils.js";
import type { Argon2Params } from "../config";
import { constantTimeEqual, fromBase64, toBase64NoPad } from "../lib/encoding";

const SALT_BYTES = 16;
const HASH_BYTES = 32;
const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/**
 * Hashes a password with Argon2id and returns the PHC string
 * (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`), which records its own parameters so that
 * stronger settings later still verify old hashes.
 */
export function hashPassword(password: string, params: Argon2Params): string {
  const salt = randomBytes(SALT_BYTES);
  const hash = argon2id(password, salt, {
    m: params.memoryKib,
    t: params.iterations,
    p: params.parallelism,
    dkLen: HASH_BYTES,
  });
  return `$argon2id$v=19$m=${params.memoryKib},t=${params.iterations},p=${params.parallelism}$${toBase64NoPad(salt)}$${toBase64NoPad(hash)}`;
}

/** Parameters recorded in a PHC string, or null when it is not an Argon2id PHC string. */
export function phcParams(phc: string): Argon2Params | null {
  const match = PHC.exec(phc);
  if (!match) return null;
  return { memoryKib: Number(match[1]), iterations: Number(match[2]), parallelism: Number(match[3]) };
}

/** Checks `password` against a PHC string made by `hashPassword`; false for malformed strings. */
export function verifyPassword(password: string, phc: string): boolean {
  const match = PHC.exec(phc);
  if (!match) return false;
  const [, m, t, p, salt, expected] = match;
  let saltBytes: Uint8Array;
  let expectedBytes: Uint8Array;
  try {
    saltBytes = fromBase64(salt!);
    expectedBytes = fromBase64(expected!);
  } catch {
    return false;
  }
  const actual = argon2id(password, saltBytes, {
    m: Number(m),
    t: Number(t),
    p: Number(p),
    dkLen: expectedBytes.length,
  });
  return constantTimeEqual(actual, expectedBytes);
}
