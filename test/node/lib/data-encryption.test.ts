import { describe, expect, it } from "vitest";
import { openField, openFieldText, parseDataKey, sealField } from "../../../src/lib/data-encryption";
import { toBase64NoPad, toBase64Url, toHex } from "../../../src/lib/encoding";

const randomKey = () => crypto.getRandomValues(new Uint8Array(32));

// Flips one bit of the character at `index` of a base64url segment, keeping it valid base64url.
function flipCharacter(text: string, index: number): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const swapped = alphabet[alphabet.indexOf(text[index]!) ^ 1]!;
  return text.slice(0, index) + swapped + text.slice(index + 1);
}

describe("sealField / openField", () => {
  it("round-trips text and bytes", async () => {
    const key = randomKey();
    const sealed = await sealField(key, "JBSWY3DPEHPK3PXP ✓", "totp:42");
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(await openFieldText(key, sealed, "totp:42")).toBe("JBSWY3DPEHPK3PXP ✓");

    const bytes = new Uint8Array([0, 1, 2, 254, 255]);
    expect(await openField(key, await sealField(key, bytes, "blob:1"), "blob:1")).toEqual(bytes);
    expect(await openField(key, await sealField(key, new Uint8Array(), "empty"), "empty")).toEqual(new Uint8Array());
  });

  it("seals the same value differently every time", async () => {
    const key = randomKey();
    const first = await sealField(key, "same", "totp:1");
    const second = await sealField(key, "same", "totp:1");
    expect(first).not.toBe(second);
    expect(first.split(".")[1]).not.toBe(second.split(".")[1]);
  });

  it("refuses a different context", async () => {
    const key = randomKey();
    const sealed = await sealField(key, "secret", "totp:42");
    await expect(openField(key, sealed, "totp:43")).rejects.toThrow();
    await expect(openField(key, sealed, "other:42")).rejects.toThrow();
  });

  it("refuses a different key", async () => {
    const sealed = await sealField(randomKey(), "secret", "totp:42");
    await expect(openField(randomKey(), sealed, "totp:42")).rejects.toThrow();
  });

  it("refuses tampered ciphertext, tag or IV", async () => {
    const key = randomKey();
    const sealed = await sealField(key, "secret value", "totp:42");
    const [version, iv, body] = sealed.split(".") as [string, string, string];
    await expect(openField(key, `${version}.${iv}.${flipCharacter(body, 0)}`, "totp:42")).rejects.toThrow();
    await expect(openField(key, `${version}.${iv}.${flipCharacter(body, body.length - 2)}`, "totp:42")).rejects.toThrow();
    await expect(openField(key, `${version}.${flipCharacter(iv, 0)}.${body}`, "totp:42")).rejects.toThrow();
  });

  it("refuses a flipped ciphertext byte", async () => {
    const key = randomKey();
    const sealed = await sealField(key, "secret value", "totp:42");
    const [version, iv, body] = sealed.split(".") as [string, string, string];
    const bytes = Uint8Array.from(atob(body.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));
    bytes[3]! ^= 0x01;
    await expect(openField(key, `${version}.${iv}.${toBase64Url(bytes)}`, "totp:42")).rejects.toThrow("could not be opened");
  });

  it("refuses another version", async () => {
    const key = randomKey();
    const sealed = await sealField(key, "secret", "totp:42");
    await expect(openField(key, sealed.replace(/^v1/, "v2"), "totp:42")).rejects.toThrow("version");
  });

  it.each([
    "",
    "v1",
    "v1.",
    "v1..",
    "v1.AAAA.AAAA",
    "v1.AAAAAAAAAAAAAAAA",
    "v1.AAAAAAAAAAAAAAAA.!!!!",
    "v1.AAAAAAAAAAAAAAAA.AAAA",
    "v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.x",
  ])("refuses the malformed value %j", async (sealed) => {
    await expect(openField(randomKey(), sealed, "totp:42")).rejects.toThrow();
  });

  it("refuses an empty context and keys of the wrong size", async () => {
    await expect(sealField(randomKey(), "secret", "")).rejects.toThrow();
    await expect(sealField(new Uint8Array(16), "secret", "totp:1")).rejects.toThrow();
  });
});

describe("parseDataKey", () => {
  const key = Uint8Array.from({ length: 32 }, (_, i) => i * 7 + 3);

  it("accepts hex in either case", () => {
    expect(parseDataKey(toHex(key))).toEqual(key);
    expect(parseDataKey(toHex(key).toUpperCase())).toEqual(key);
  });

  it("accepts standard and URL-safe base64, padded or not", () => {
    const bytes = Uint8Array.from({ length: 32 }, (_, i) => 255 - i * 3);
    const standard = toBase64NoPad(bytes);
    expect(standard).toMatch(/[+/]/);
    expect(parseDataKey(standard)).toEqual(bytes);
    expect(parseDataKey(`${standard}=`)).toEqual(bytes);
    expect(parseDataKey(toBase64Url(bytes))).toEqual(bytes);
    expect(parseDataKey(`${toBase64Url(key)}\n`)).toEqual(key);
  });

  it.each([
    ["31 bytes of hex", toHex(new Uint8Array(31))],
    ["33 bytes of hex", toHex(new Uint8Array(33))],
    ["31 bytes of base64", toBase64NoPad(new Uint8Array(31))],
    ["33 bytes of base64", toBase64NoPad(new Uint8Array(33))],
    ["junk", "not a key at all!"],
    ["empty", ""],
  ])("refuses %s without echoing it", (_, value) => {
    expect(() => parseDataKey(value)).toThrow(Error);
    try {
      parseDataKey(value);
    } catch (error) {
      if (value) expect((error as Error).message).not.toContain(value);
    }
  });
});
