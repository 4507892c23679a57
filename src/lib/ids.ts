import { toHex } from "./encoding";

/** A random id of 32 lowercase hex characters (128 bits): the ids of images and files (decisions.md). */
export function randomHexId(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(16)));
}
