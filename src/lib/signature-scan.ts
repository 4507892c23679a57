/**
 * The built-in malware scanner: a byte-signature search. It is no antivirus engine; it catches
 * the EICAR test file (so a deployment can prove its scanning path end to end) and whatever
 * signatures the operator configures (`MALWARE_SIGNATURES`), and it is the default when no
 * external scanner is configured.
 */

/** The EICAR anti-virus test file's 68 characters (eicar.org), split so this source is not flagged itself. */
const EICAR = "X5O!P%@AP[4\\PZX54(P^)7CC)7}$" + "EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*";

/** A named byte sequence to look for. */
export interface Signature {
  name: string;
  bytes: Uint8Array;
}

/** The signatures every scan uses. */
export const BUILT_IN_SIGNATURES: readonly Signature[] = [{ name: "EICAR-Test-File", bytes: new TextEncoder().encode(EICAR) }];

/**
 * Parses `MALWARE_SIGNATURES`: a comma-separated list of `name:hex` entries (`hex` an even number
 * of hex digits, at least 8 bytes so a signature cannot match everything). Throws on a malformed
 * entry, so a typo fails the configuration instead of silently scanning for less.
 */
export function parseSignatures(value: string | undefined): Signature[] {
  if (!value?.trim()) return [];
  return value.split(",").map((entry) => {
    const match = /^\s*([A-Za-z0-9._-]{1,64}):([0-9a-fA-F]+)\s*$/.exec(entry);
    if (!match || match[2]!.length % 2 !== 0 || match[2]!.length < 16) {
      throw new Error("MALWARE_SIGNATURES entries must be name:hex with at least 8 bytes of hex");
    }
    const hex = match[2]!;
    const bytes = new Uint8Array(hex.length / 2);
    for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
    return { name: match[1]!, bytes };
  });
}

/**
 * Incremental search for every signature over a stream of chunks: each chunk is searched with
 * the tail of the previous one in front, so a signature split across chunks is found, and memory
 * stays one chunk plus the longest signature.
 */
export class SignatureScanner {
  private readonly longest: number;
  private carry = new Uint8Array(0);
  private found: string | null = null;

  constructor(private readonly signatures: readonly Signature[]) {
    this.longest = Math.max(0, ...signatures.map((signature) => signature.bytes.length));
  }

  /** Feeds the next chunk; returns the name of the first signature found so far, or null. */
  push(chunk: Uint8Array): string | null {
    if (this.found || this.longest === 0) return this.found;
    const window = new Uint8Array(this.carry.length + chunk.length);
    window.set(this.carry);
    window.set(chunk, this.carry.length);
    for (const signature of this.signatures) {
      if (indexOf(window, signature.bytes) >= 0) {
        this.found = signature.name;
        return this.found;
      }
    }
    this.carry = window.slice(Math.max(0, window.length - (this.longest - 1)));
    return null;
  }

  /** The name of the signature found, or null when the input was clean. */
  get result(): string | null {
    return this.found;
  }
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  const first = needle[0]!;
  const last = haystack.length - needle.length;
  for (let i = haystack.indexOf(first); i !== -1 && i <= last; i = haystack.indexOf(first, i + 1)) {
    let j = 1;
    while (j < needle.length && haystack[i + j] === needle[j]) j++;
    if (j === needle.length) return i;
  }
  return -1;
}
