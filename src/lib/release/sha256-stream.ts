import { sha256 } from "@noble/hashes/sha2.js";
import { toHex } from "../encoding";

/** A SHA-256 fed in order; `update` resolves once the bytes are taken (the caller may then reuse them). */
export interface Sha256Stream {
  update(bytes: Uint8Array): Promise<void>;
  /** Lower-case hex; ends the stream. */
  digest(): Promise<string>;
}

type DigestStreamClass = new (algorithm: string) => WritableStream<ArrayBufferView> & { readonly digest: Promise<ArrayBuffer> };

/**
 * A streaming SHA-256: the Workers runtime's native `crypto.DigestStream` (about seven times the
 * speed of hashing in JavaScript here), or, where there is none (Node, which runs the release
 * library in tests and benches), @noble/hashes.
 */
export function sha256Stream(): Sha256Stream {
  const Native = (crypto as unknown as { DigestStream?: DigestStreamClass }).DigestStream;
  if (Native) {
    const stream = new Native("SHA-256");
    const writer = stream.getWriter();
    return {
      update: (bytes) => writer.write(bytes),
      digest: async () => {
        await writer.close();
        return toHex(new Uint8Array(await stream.digest));
      },
    };
  }
  const hash = sha256.create();
  return {
    update: async (bytes) => {
      hash.update(bytes);
    },
    digest: async () => toHex(hash.digest()),
  };
}

/** The SHA-256 of bytes at hand, in hex (Web Crypto: native everywhere). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}
