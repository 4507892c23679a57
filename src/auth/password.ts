import Argon2, { Argon2Type, Argon2Version } from "@phi-ag/argon2";
// Wrangler and the vitest pool both load `.wasm` imports as compiled modules, so nothing is
// compiled at run time (workerd forbids that).
import argon2Wasm from "@phi-ag/argon2/argon2.wasm";
import type { Argon2Params } from "../config";
import { constantTimeEqual, fromBase64, toBase64NoPad } from "../lib/encoding";

const SALT_BYTES = 16;
const HASH_BYTES = 32;
const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

let engine: Argon2 | undefined;

// One instance per isolate: instantiating is cheap but the 19 MiB working memory is reused.
function argon2(): Argon2 {
  engine ??= new Argon2(new WebAssembly.Instance(argon2Wasm));
  return engine;
}

const utf8 = new TextEncoder();

/**
 * @phi-ag/argon2 0.5.28 copies the password to Wasm memory as UTF-8 but passes its UTF-16
 * length as the byte count, so any non-ASCII password would be cut short. It only ever reads
 * `length` and the string value, so it gets both right here: the text, and its UTF-8 byte count.
 */
function withByteLength(password: string): string {
  const bytes = utf8.encode(password).length;
  if (bytes === password.length) return password;
  return { length: bytes, toString: () => password, valueOf: () => password } as unknown as string;
}

function derive(password: string, salt: Uint8Array, params: Argon2Params, length: number): Uint8Array {
  return argon2().hash(withByteLength(password), {
    salt,
    hashLength: length,
    timeCost: params.iterations,
    memoryCost: params.memoryKib,
    parallelism: params.parallelism,
    type: Argon2Type.Argon2id,
    version: Argon2Version.Version13,
  }).hash;
}

/**
 * Hashes a password with Argon2id (a WebAssembly build, about 25 ms at the OWASP minimum here)
 * and returns the PHC string (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`), which records its
 * own parameters so that stronger settings later still verify old hashes.
 */
export function hashPassword(password: string, params: Argon2Params): string {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = derive(password, salt, params, HASH_BYTES);
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
  const params = phcParams(phc);
  const match = PHC.exec(phc);
  if (!params || !match) return false;
  let salt: Uint8Array;
  let expected: Uint8Array;
  try {
    salt = fromBase64(match[4]!);
    expected = fromBase64(match[5]!);
  } catch {
    return false;
  }
  if (expected.length < 16 || salt.length < 8) return false;
  return constantTimeEqual(derive(password, salt, params, expected.length), expected);
}

/**
 * A well-formed hash that no password matches, with the given parameters: verifying against it
 * costs exactly what a real account costs, so a login for an unknown email is not faster.
 */
export function dummyPasswordHash(params: Argon2Params): string {
  const zeros = toBase64NoPad(new Uint8Array(HASH_BYTES));
  return `$argon2id$v=19$m=${params.memoryKib},t=${params.iterations},p=${params.parallelism}$${toBase64NoPad(new Uint8Array(SALT_BYTES))}$${zeros}`;
}
