import { hkdf } from "@noble/hashes/hkdf.js";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { toHex } from "../encoding";

const encoder = new TextEncoder();

// The label binds the derived key to this one use: no other key of the service equals it.
const INFO = encoder.encode("relab dataset release owner pseudonym v1");

/**
 * The key of owner pseudonyms, derived (HKDF-SHA256) from the service's pseudonym secret (config
 * `pseudonymSecret`: `PSEUDONYM_KEY`, else data key id 0, whichever key seals), so it is the same
 * for every release and across data-key rotations: pseudonyms stay stable, and nobody without the
 * secret can tell which account one stands for (docs/releases.md, Pseudonyms; decisions.md, Key
 * rotation).
 */
export function pseudonymKey(secret: Uint8Array): Uint8Array {
  if (secret.length < 32) throw new Error("the pseudonym secret must hold at least 32 bytes");
  return hkdf(sha256, secret, undefined, INFO, 32);
}

/**
 * An owner's pseudonym in a release: `o_` and the first 128 bits of HMAC-SHA256(key, owner id) in
 * hex. Keyed, so that ids (which are small, guessable integers) cannot be hashed to find who is who.
 */
export function ownerPseudonym(key: Uint8Array, ownerId: number): string {
  if (!Number.isSafeInteger(ownerId) || ownerId < 1) throw new Error("an owner id is a positive integer");
  return `o_${toHex(hmac(sha256, key, encoder.encode(`owner:${ownerId}`)).subarray(0, 16))}`;
}
