import { createHmac, hkdfSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { LICENCE_IDS, licence } from "../../../src/lib/release/licences.ts";
import { ownerPseudonym, pseudonymKey } from "../../../src/lib/release/pseudonym.ts";

const dataKey = new Uint8Array(32).map((_, i) => i * 7 + 1);

describe("owner pseudonyms", () => {
  it("are stable for a key and an owner, differ between owners and between keys", () => {
    const key = pseudonymKey(dataKey);
    expect(ownerPseudonym(key, 42)).toBe(ownerPseudonym(pseudonymKey(dataKey.slice()), 42));
    expect(ownerPseudonym(key, 42)).toMatch(/^o_[0-9a-f]{32}$/);
    expect(ownerPseudonym(key, 42)).not.toBe(ownerPseudonym(key, 43));
    const otherKey = pseudonymKey(dataKey.map((b) => b ^ 1));
    expect(ownerPseudonym(otherKey, 42)).not.toBe(ownerPseudonym(key, 42));
  });

  it("use a key derived for this purpose only, never the data key itself", () => {
    const key = pseudonymKey(dataKey);
    expect(key).toHaveLength(32);
    expect(Buffer.from(key).equals(Buffer.from(dataKey))).toBe(false);
    // The same derivation by Node's own HKDF and HMAC: a change of it (which would change every
    // pseudonym of later releases) cannot pass unnoticed.
    const expected = Buffer.from(hkdfSync("sha256", dataKey, new Uint8Array(0), "relab dataset release owner pseudonym v1", 32));
    expect(Buffer.from(key).equals(expected)).toBe(true);
    const mac = createHmac("sha256", expected).update("owner:1").digest("hex").slice(0, 32);
    expect(ownerPseudonym(key, 1)).toBe(`o_${mac}`);
    expect(ownerPseudonym(key, 1)).toBe("o_5b571d30ba8eec4e1920e4904455c8ab");
  });

  it("refuse short keys and ids that are not positive integers", () => {
    expect(() => pseudonymKey(new Uint8Array(16))).toThrow();
    for (const id of [0, -1, 1.5, Number.NaN]) expect(() => ownerPseudonym(pseudonymKey(dataKey), id)).toThrow();
  });
});

describe("licences a release may carry", () => {
  it("are all known, with their URL and title", () => {
    for (const id of LICENCE_IDS) expect(licence(id)).toMatchObject({ name: id, path: expect.stringMatching(/^https:\/\//) });
  });
});
