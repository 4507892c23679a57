import { describe, expect, it } from "vitest";
import {
  type DataKeyRing,
  isSealedWithCurrent,
  openField,
  openFieldText,
  parseDataKey,
  parseKeyList,
  SealedKeyUnavailable,
  sealedKeyId,
  sealField,
  singleKeyRing,
} from "../../../src/lib/data-encryption";
import { toBase64NoPad, toBase64Url, toHex } from "../../../src/lib/encoding";

const randomKey = (): DataKeyRing => singleKeyRing(crypto.getRandomValues(new Uint8Array(32)));

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
    expect(sealed).toMatch(/^v2\.0\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
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
    expect(first.split(".")[2]).not.toBe(second.split(".")[2]);
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
    const [version, id, iv, body] = sealed.split(".") as [string, string, string, string];
    await expect(openField(key, `${version}.${id}.${iv}.${flipCharacter(body, 0)}`, "totp:42")).rejects.toThrow();
    await expect(openField(key, `${version}.${id}.${iv}.${flipCharacter(body, body.length - 2)}`, "totp:42")).rejects.toThrow();
    await expect(openField(key, `${version}.${id}.${flipCharacter(iv, 0)}.${body}`, "totp:42")).rejects.toThrow();
  });

  it("refuses a flipped ciphertext byte", async () => {
    const key = randomKey();
    const sealed = await sealField(key, "secret value", "totp:42");
    const [version, id, iv, body] = sealed.split(".") as [string, string, string, string];
    const bytes = Uint8Array.from(atob(body.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));
    bytes[3]! ^= 0x01;
    await expect(openField(key, `${version}.${id}.${iv}.${toBase64Url(bytes)}`, "totp:42")).rejects.toThrow("could not be opened");
  });

  it("refuses another version", async () => {
    const key = randomKey();
    const sealed = await sealField(key, "secret", "totp:42");
    await expect(openField(key, sealed.replace(/^v2/, "v3"), "totp:42")).rejects.toThrow("version");
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
    "v2.0.AAAAAAAAAAAAAAAA",
    "v2.x.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",
    "v2.00.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",
    "v2.70000.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA",
  ])("refuses the malformed value %j", async (sealed) => {
    await expect(openField(randomKey(), sealed, "totp:42")).rejects.toThrow(/Malformed|version/);
  });

  it("refuses an empty context and keys of the wrong size", async () => {
    await expect(sealField(randomKey(), "secret", "")).rejects.toThrow();
    await expect(sealField(singleKeyRing(new Uint8Array(16)), "secret", "totp:1")).rejects.toThrow();
  });
});

describe("key rotation (decisions.md, Key rotation)", () => {
  const k0 = crypto.getRandomValues(new Uint8Array(32));
  const k1 = crypto.getRandomValues(new Uint8Array(32));
  const before = singleKeyRing(k0);
  const during: DataKeyRing = {
    current: 1,
    keys: new Map([
      [1, k1],
      [0, k0],
    ]),
  };
  const after = singleKeyRing(k1, 1);

  it("names the sealing key in every value, and a ring opens what any of its keys sealed", async () => {
    const old = await sealField(before, "seed", "totp:7");
    const fresh = await sealField(during, "seed", "totp:7");
    expect(sealedKeyId(old)).toBe(0);
    expect(sealedKeyId(fresh)).toBe(1);
    expect(fresh).toMatch(/^v2\.1\./);
    expect(await openFieldText(during, old, "totp:7")).toBe("seed");
    expect(await openFieldText(during, fresh, "totp:7")).toBe("seed");
    expect(isSealedWithCurrent(during, old)).toBe(false);
    expect(isSealedWithCurrent(during, fresh)).toBe(true);
  });

  it("opens values of the first format (before key ids) as key id 0", async () => {
    // A version-1 value as the service wrote it before key ids: AES-256-GCM, the context alone as AAD.
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const key = await crypto.subtle.importKey("raw", k0, { name: "AES-GCM" }, false, ["encrypt"]);
    const body = new Uint8Array(
      await crypto.subtle.encrypt(
        { name: "AES-GCM", iv, additionalData: new TextEncoder().encode("totp:7") },
        key,
        new TextEncoder().encode("legacy"),
      ),
    );
    const legacy = `v1.${toBase64Url(iv)}.${toBase64Url(body)}`;
    expect(sealedKeyId(legacy)).toBe(0);
    expect(await openFieldText(during, legacy, "totp:7")).toBe("legacy");
    await expect(openField(after, legacy, "totp:7")).rejects.toThrow(SealedKeyUnavailable);
  });

  it("tells a removed key apart from tampering, naming the key id only", async () => {
    const old = await sealField(before, "seed", "totp:7");
    const error = await openField(after, old, "totp:7").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SealedKeyUnavailable);
    expect((error as SealedKeyUnavailable).keyId).toBe(0);
    expect((error as Error).message).toBe("Sealed value needs data key id 0, which is not configured");
  });

  it("binds the key id: a value relabelled with another id does not open", async () => {
    const fresh = await sealField(during, "seed", "totp:7");
    const relabelled = fresh.replace(/^v2\.1\./, "v2.0.");
    const both: DataKeyRing = {
      current: 1,
      keys: new Map([
        [1, k1],
        [0, k1],
      ]),
    };
    await expect(openField(both, relabelled, "totp:7")).rejects.toThrow("could not be opened");
  });

  it("parses DATA_ENCRYPTION_KEYS: the first entry seals", () => {
    const parsed = parseKeyList(` 2:${toHex(k1)} , 0:${toHex(k0)}`);
    expect(parsed.current).toBe(2);
    expect(parsed.keys.get(2)).toEqual(k1);
    expect(parsed.keys.get(0)).toEqual(k0);
    for (const bad of ["", "2", `x:${toHex(k1)}`, `1:${toHex(k1)},1:${toHex(k0)}`, `65536:${toHex(k1)}`, "3:abcd"]) {
      expect(() => parseKeyList(bad)).toThrow();
      try {
        parseKeyList(bad);
      } catch (error) {
        expect((error as Error).message).not.toContain(toHex(k1));
      }
    }
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
