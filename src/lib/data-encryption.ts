import { fromBase64, fromBase64Url, toBase64Url } from "./encoding";

const VERSION = "v1";
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
 * Encrypts `plaintext` with AES-256-GCM as `v1.<iv>.<ciphertext+tag>` (base64url). `context`
 * (e.g. `"totp:42"`) is authenticated, so the value opens only for the same row and purpose.
 */
export async function sealField(key: Uint8Array, plaintext: Uint8Array | string, context: string): Promise<string> {
  const additionalData = checkContext(context);
  const data = typeof plaintext === "string" ? encoder.encode(plaintext) : plaintext;
  // A fresh random IV per seal: reusing one under the same key breaks GCM entirely.
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData }, await cryptoKey(key), data);
  return `${VERSION}.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(sealed))}`;
}

/** Decrypts a value made by `sealField` with the same key and context; throws otherwise. */
export async function openField(key: Uint8Array, sealed: string, context: string): Promise<Uint8Array> {
  const additionalData = checkContext(context);
  const parts = sealed.split(".");
  if (parts.length !== 3) throw new Error("Malformed sealed value");
  const [version, ivText, bodyText] = parts as [string, string, string];
  if (version !== VERSION) throw new Error("Unsupported sealed value version");
  let iv: Uint8Array;
  let body: Uint8Array;
  try {
    iv = fromBase64Url(ivText);
    body = fromBase64Url(bodyText);
  } catch {
    throw new Error("Malformed sealed value");
  }
  if (iv.length !== IV_BYTES || body.length < TAG_BYTES) throw new Error("Malformed sealed value");
  const cryptoKeyValue = await cryptoKey(key);
  try {
    return new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData }, cryptoKeyValue, body));
  } catch {
    // One message for tampering, wrong key and wrong context: GCM cannot tell them apart anyway.
    throw new Error("Sealed value could not be opened");
  }
}

/** `openField`, decoded as UTF-8 (throws on invalid UTF-8). */
export async function openFieldText(key: Uint8Array, sealed: string, context: string): Promise<string> {
  return decoder.decode(await openField(key, sealed, context));
}
