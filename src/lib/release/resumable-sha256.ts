import { _SHA256 } from "@noble/hashes/sha2.js";
import { hexToBytes } from "@noble/hashes/utils.js";
import { toHex } from "../encoding";

/** A SHA-256 in progress, saved between whole 64-byte blocks (JSON-safe). */
export interface Sha256State {
  /** Bytes hashed so far: a multiple of 64. */
  readonly bytes: number;
  /** The eight chaining words after them, as 64 hex digits. */
  readonly chain: string;
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * SHA-256 whose progress can be written down and picked up by another invocation.
 *
 * Web Crypto has no streaming digest, and noble's hash has no public way to export its state.
 * Its exported `_SHA256` class keeps the chaining words behind protected `get`/`set` and the
 * counts in protected `length`/`pos`, which a subclass may use: between whole blocks (`pos` 0)
 * the words and the byte count are the whole state, so that is the only point where one is
 * saved. This leans on protected members of an underscore-named class: @noble/hashes is pinned
 * exactly, and test/node/release/resumable-sha256.test.ts fails if an upgrade changes them.
 */
export class ResumableSha256 extends _SHA256 {
  /** The state to resume from; only between whole blocks. */
  save(): Sha256State {
    if (this.pos !== 0) throw new Error("a SHA-256 state is saved between whole 64-byte blocks only");
    const words = new Uint8Array(32);
    const view = new DataView(words.buffer);
    for (const [i, word] of this.get().entries()) view.setUint32(i * 4, word >>> 0);
    return { bytes: this.length, chain: toHex(words) };
  }

  static restore(state: Sha256State): ResumableSha256 {
    if (!Number.isSafeInteger(state.bytes) || state.bytes < 0 || state.bytes % 64 !== 0 || !HEX64.test(state.chain)) {
      throw new Error("not a SHA-256 state");
    }
    const hash = new ResumableSha256();
    const view = new DataView(hexToBytes(state.chain).buffer);
    const w = (i: number) => view.getUint32(i * 4);
    hash.set(w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7));
    hash.length = state.bytes;
    return hash;
  }
}
