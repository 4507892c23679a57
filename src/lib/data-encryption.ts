import { fromBase64, fromBase64Url, toBase64Url } from "./encoding";

const VERSION_1 = "v1";
const VERSION_2 = "v2";
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
// Promises rather than keys, so concurrent first uses share one import. Keyed by the array's
// identity: callers parse the configured key once and keep passing the same array.
const imported = new WeakMap<Uint8Array, Promise<CryptoKey>>();

/** Reads a 256-bit data key given as 64 hex characters or base64 (standard or URL-safe) of 32 bytes. */
export function parseDataKey(value: string): Uint8Array {
  // The messages never echo the value: they end up in logs, the key must not.
  const text = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) {
    const key = new Uint8Array(KEY_BYTES);
    for (let i = 0; i < KEY_BYTES; i++) key[i] = Number.parseInt(text.slice(i * 2, i * 2 + 2), 16);
    return key;
  }
  if (/[-_]/.test(text) && /[+/]/.test(text)) throw new Error("Data key mixes base64 alphabets");
  let key: Uint8Array;
  try {
    key = fromBase64(text.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    throw new Error("Data key must be 64 hex characters or base64 of 32 bytes");
  }
  if (key.length !== KEY_BYTES) throw new Error(`Data key must be ${KEY_BYTES} bytes, got ${key.length}`);
  return key;
}

function cryptoKey(key: Uint8Array): Promise<CryptoKey> {
  if (key.length !== KEY_BYTES) throw new Error(`Data key must be ${KEY_BYTES} bytes`);
  let pending = imported.get(key);
  if (!pending) {
    pending = crypto.subtle.importKey("raw", key, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
    imported.set(key, pending);
    pending.catch(() => imported.delete(key));
  }
  return pending;
}

function checkContext(context: string): Uint8Array {
  // An empty context would bind the value to nothing, which defeats the point of having one.
  if (context.length === 0) throw new Error("Sealing context must not be empty");
  return encoder.encode(context);
}

/**
 * The data keys of the service, by key id (`DATA_ENCRYPTION_KEYS`, and `DATA_ENCRYPTION_KEY` as
 * key id 0): `current` seals, every key opens (decisions.md, Key rotation).
 */
export interface DataKeyRing {
  readonly current: number;
  readonly keys: ReadonlyMap<number, Uint8Array>;
}

/** Key ids are small non-negative integers: they travel in every sealed value. */
export const MAX_KEY_ID = 65_535;

/** A ring of one key (key id 0 unless given): what `DATA_ENCRYPTION_KEY` alone configures. */
export function singleKeyRing(key: Uint8Array, id = 0): DataKeyRing {
  return { current: id, keys: new Map([[id, key]]) };
}

/**
 * Reads `DATA_ENCRYPTION_KEYS`: `id:key,id:key,...`, each key 64 hex characters (or base64 of 32
 * bytes), ids distinct integers from 0 to 65535; the first entry seals. Messages never echo a key.
 */
export function parseKeyList(value: string): { current: number; keys: Map<number, Uint8Array> } {
  const entries = value
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new Error("the key list is empty");
  const keys = new Map<number, Uint8Array>();
  for (const [index, entry] of entries.entries()) {
    const match = /^(\d{1,5}):(.+)$/.exec(entry);
    if (!match) throw new Error(`entry ${index + 1} is not id:key`);
    const id = Number(match[1]);
    if (id > MAX_KEY_ID) throw new Error(`entry ${index + 1}: key ids go from 0 to ${MAX_KEY_ID}`);
    if (keys.has(id)) throw new Error(`key id ${id} is listed twice`);
    try {
      keys.set(id, parseDataKey(match[2]!));
    } catch (error) {
      throw new Error(`key id ${id}: ${(error as Error).message}`);
    }
  }
  return { current: Number(/^\d+/.exec(entries[0]!)![0]), keys };
}

/** A value sealed with a key id the ring no longer holds (a retired key): a clear error, not a tampering one. */
export class SealedKeyUnavailable extends Error {
  override name = "SealedKeyUnavailable";
  constructor(readonly keyId: number) {
    super(`Sealed value needs data key id ${keyId}, which is not configured`);
  }
}

/** The key id a sealed value names (version 1 values were all sealed with key id 0), or null when malformed. */
export function sealedKeyId(sealed: string): number | null {
  if (sealed.startsWith(`${VERSION_1}.`)) return 0;
  const match = /^v2\.(\d{1,5})\./.exec(sealed);
  return match ? Number(match[1]) : null;
}

/**
 * Encrypts `plaintext` with AES-256-GCM under the ring's current key as
 * `v2.<key id>.<iv>.<ciphertext+tag>` (base64url). `context` (e.g. `"totp:42"`) and the key id
 * are authenticated, so the value opens only for the same row and purpose.
 */
export async function sealField(ring: DataKeyRing, plaintext: Uint8Array | string, context: string): Promise<string> {
  const keyId = ring.current;
  const key = ring.keys.get(keyId);
  if (!key) throw new Error(`the ring has no key with its current id ${keyId}`);
  const additionalData = additionalDataFor(keyId, context);
  const data = typeof plaintext === "string" ? encoder.encode(plaintext) : plaintext;
  // A fresh random IV per seal: reusing one under the same key breaks GCM entirely.
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData }, await cryptoKey(key), data);
  return `${VERSION_2}.${keyId}.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(sealed))}`;
}

// Version 1 values bound the context alone; version 2 binds the key id too, so that a value's
// key id cannot be rewritten to point at another key without the value failing to open.
function additionalDataFor(keyId: number | null, context: string): Uint8Array {
  const bound = checkContext(context);
  return keyId === null ? bound : encoder.encode(`${VERSION_2}.${keyId}|${context}`);
}

/**
 * Decrypts a value made by `sealField` with a key of the ring and the same context; throws
 * otherwise: `SealedKeyUnavailable` when its key id is not in the ring, an Error for anything else.
 */
export async function openField(ring: DataKeyRing, sealed: string, context: string): Promise<Uint8Array> {
  checkContext(context);
  const parts = sealed.split(".");
  let keyId: number;
  let bound: number | null;
  let ivText: string;
  let bodyText: string;
  if (parts[0] === VERSION_1 && parts.length === 3) {
    keyId = 0;
    bound = null;
    [, ivText, bodyText] = parts as [string, string, string];
  } else if (parts[0] === VERSION_2 && parts.length === 4) {
    if (!/^(0|[1-9]\d{0,4})$/.test(parts[1]!) || Number(parts[1]) > MAX_KEY_ID) throw new Error("Malformed sealed value");
    keyId = Number(parts[1]);
    bound = keyId;
    [, , ivText, bodyText] = parts as [string, string, string, string];
  } else if (parts[0] !== VERSION_1 && parts[0] !== VERSION_2 && parts.length >= 3) {
    throw new Error("Unsupported sealed value version");
  } else {
    throw new Error("Malformed sealed value");
  }
  let iv: Uint8Array;
  let body: Uint8Array;
  try {
    iv = fromBase64Url(ivText);
    body = fromBase64Url(bodyText);
  } catch {
    throw new Error("Malformed sealed value");
  }
  if (iv.length !== IV_BYTES || body.length < TAG_BYTES) throw new Error("Malformed sealed value");
  const key = ring.keys.get(keyId);
  if (!key) throw new SealedKeyUnavailable(keyId);
  const cryptoKeyValue = await cryptoKey(key);
  try {
    return new Uint8Array(
      await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: additionalDataFor(bound, context) }, cryptoKeyValue, body),
    );
  } catch {
    // One message for tampering, wrong key and wrong context: GCM cannot tell them apart anyway.
    throw new Error("Sealed value could not be opened");
  }
}

/** Whether a sealed value is under the ring's current key (otherwise the re-encryption job moves it). */
export function isSealedWithCurrent(ring: DataKeyRing, sealed: string): boolean {
  return sealed.startsWith(`${VERSION_2}.${ring.current}.`);
}

/** `openField`, decoded as UTF-8 (throws on invalid UTF-8). */
export async function openFieldText(ring: DataKeyRing, sealed: string, context: string): Promise<string> {
  return decoder.decode(await openField(ring, sealed, context));
}
