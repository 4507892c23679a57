/** Standard base64 of `bytes`, without `=` padding (the form PHC strings use). */
export function toBase64NoPad(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/=+$/, "");
}

/** Decodes standard base64 with or without padding; throws on anything else. */
export function fromBase64(text: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new Error("Invalid base64");
  const binary = atob(text.padEnd(Math.ceil(text.length / 4) * 4, "="));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Compares two byte arrays in time that depends only on their length. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** URL-safe base64 without padding (JWTs, tokens in links and cookies). */
export function toBase64Url(bytes: Uint8Array): string {
  return toBase64NoPad(bytes).replaceAll("+", "-").replaceAll("/", "_");
}

/** Decodes URL-safe base64 without padding; throws on anything else. */
export function fromBase64Url(text: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error("Invalid base64url");
  return fromBase64(text.replaceAll("-", "+").replaceAll("_", "/"));
}

/** Lower-case hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex;
}
