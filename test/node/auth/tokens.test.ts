import { hmac } from "@noble/hashes/hmac.js";
import { sha256, sha512 } from "@noble/hashes/sha2.js";
import { describe, expect, it } from "vitest";
import {
  checkLinkToken,
  fingerprint,
  parseLinkToken,
  randomToken,
  readAccessToken,
  signAccessToken,
  signLinkToken,
} from "../../../src/auth/tokens";
import { fromBase64Url, toBase64Url } from "../../../src/lib/encoding";

const SECRET = "unit-test-secret-0123456789abcdef0123456789";
const OTHER_SECRET = "another-secret-0123456789abcdef0123456789ab";
const NOW = 1_750_000_000;
const claims = { userId: 42, sessionId: "session-abc", issuedAtMs: NOW * 1000 + 123, expiresAt: NOW + 900 };

const encodeJson = (value: unknown) => toBase64Url(new TextEncoder().encode(JSON.stringify(value)));
const decodeJson = (part: string) => JSON.parse(new TextDecoder().decode(fromBase64Url(part)));
/** Replaces the first character (which carries six whole bits, so the decoded bytes change). */
const flipFirst = (part: string) => (part[0] === "A" ? "B" : "A") + part.slice(1);

// A token as the service signs it; the forgeries below are built from its parts.
const token = await signAccessToken(SECRET, claims);
const [header, payload, signature] = token.split(".") as [string, string, string];

/** The access key as the service derives it (tokens.ts keysFor), for signing forgeries the way an insider could. */
const derivedKey = (secret: string, purpose: string) =>
  hmac(sha256, new TextEncoder().encode(secret), new TextEncoder().encode(`relab/${purpose}/v1`));
const claimsJson = { sub: "42", sid: "session-abc", iat: claims.issuedAtMs / 1000, exp: claims.expiresAt };
/** A compact JWS over `headerJson` and the test claims, HMAC'd with `key` under SHA-256 (or `hash`). */
function handSigned(headerJson: object, key: Uint8Array, hash: typeof sha256 | typeof sha512 = sha256): string {
  const signed = `${encodeJson(headerJson)}.${encodeJson(claimsJson)}`;
  return `${signed}.${toBase64Url(hmac(hash, key, new TextEncoder().encode(signed)))}`;
}

describe("access tokens", () => {
  it("round-trips its claims, keeping the millisecond iat", async () => {
    expect(token.split(".")).toHaveLength(3);
    expect(await readAccessToken(SECRET, token, NOW)).toEqual(claims);
  });

  it("is an HS256 JWT with the claims sub, sid, iat (fractional) and exp", () => {
    expect(decodeJson(header)).toEqual({ alg: "HS256", typ: "JWT" });
    expect(decodeJson(payload)).toEqual(claimsJson);
  });

  it("still reads a token in the form the hand-written signer issued before jose (tokens live across a deploy)", async () => {
    const issuedBefore = handSigned({ alg: "HS256", typ: "JWT" }, derivedKey(SECRET, "access"));
    expect(await readAccessToken(SECRET, issuedBefore, NOW)).toEqual(claims);
  });

  it("is unexpired until exp, and refused from exp on", async () => {
    expect(await readAccessToken(SECRET, token, claims.expiresAt - 0.001)).toEqual(claims);
    expect(await readAccessToken(SECRET, token, claims.expiresAt)).toBeNull();
    expect(await readAccessToken(SECRET, token, claims.expiresAt + 1)).toBeNull();
  });

  it("is refused under another secret", async () => {
    expect(await readAccessToken(OTHER_SECRET, token, NOW)).toBeNull();
  });

  it("answers a token it verified before as the first time: expiry checked on each read, and per secret", async () => {
    const fresh = await signAccessToken(SECRET, { ...claims, sessionId: "session-remembered" });
    const expected = { ...claims, sessionId: "session-remembered" };
    expect(await readAccessToken(SECRET, fresh, NOW)).toEqual(expected);
    expect(await readAccessToken(SECRET, fresh, NOW + 1)).toEqual(expected);
    expect(await readAccessToken(OTHER_SECRET, fresh, NOW)).toBeNull();
    expect(await readAccessToken(SECRET, fresh, claims.expiresAt)).toBeNull();
    expect(await readAccessToken(SECRET, fresh, NOW)).toEqual(expected);
  });

  it.each([
    [
      "a re-encoded payload (other user)",
      `${header}.${encodeJson({ sub: "1", sid: "session-abc", iat: NOW, exp: NOW + 900 })}.${signature}`,
    ],
    ["a tampered payload character", `${header}.${flipFirst(payload)}.${signature}`],
    ["a tampered signature", `${header}.${payload}.${flipFirst(signature)}`],
    ["a missing signature", `${header}.${payload}.`],
    ["a tampered header", `${flipFirst(header)}.${payload}.${signature}`],
    ["alg none, unsigned", `${encodeJson({ alg: "none", typ: "JWT" })}.${payload}.`],
    ["alg none, old signature", `${encodeJson({ alg: "none", typ: "JWT" })}.${payload}.${signature}`],
    ["alg HS512", `${encodeJson({ alg: "HS512", typ: "JWT" })}.${payload}.${signature}`],
    ["the same header with its keys reordered", `${encodeJson({ typ: "JWT", alg: "HS256" })}.${payload}.${signature}`],
  ])("refuses %s", async (_, forged) => {
    expect(await readAccessToken(SECRET, forged, NOW)).toBeNull();
  });

  it.each([
    ["HS512 under the access key", handSigned({ alg: "HS512", typ: "JWT" }, derivedKey(SECRET, "access"), sha512)],
    ["HS256 under the email-verification key", handSigned({ alg: "HS256", typ: "JWT" }, derivedKey(SECRET, "verify"))],
    ["HS256 under the configured secret itself", handSigned({ alg: "HS256", typ: "JWT" }, new TextEncoder().encode(SECRET))],
    [
      "HS256 under a key the header brings along (jwk)",
      handSigned({ alg: "HS256", typ: "JWT", jwk: { kty: "oct", k: toBase64Url(new Uint8Array(32)) } }, new Uint8Array(32)),
    ],
  ])("refuses a correctly computed signature with %s", async (_, forged) => {
    expect(await readAccessToken(SECRET, forged, NOW)).toBeNull();
  });

  it.each(["", "garbage", "a.b", "a.b.c", `${token}.extra`, `${header}.!!!.${signature}`, "...", `${header}.${payload}.${signature}=`])(
    "refuses the malformed string %j",
    async (garbage) => {
      expect(await readAccessToken(SECRET, garbage, NOW)).toBeNull();
    },
  );

  it("refuses well-signed claims that are out of range (user id 0)", async () => {
    expect(await readAccessToken(SECRET, await signAccessToken(SECRET, { ...claims, userId: 0 }), NOW)).toBeNull();
  });
});

describe("link tokens", () => {
  const expiresAt = NOW + 3600;
  const verify = signLinkToken(SECRET, "verify", 7, expiresAt, "ada@example.org");

  it("has the form <user id>.<expiry>.<mac> and checks for its own purpose and binding", () => {
    expect(verify).toMatch(/^7\.\d+\.[A-Za-z0-9_-]{43}$/);
    expect(parseLinkToken(verify)).toEqual({ userId: 7, expiresAt });
    expect(checkLinkToken(SECRET, "verify", verify, "ada@example.org", NOW)).toBe(true);
  });

  it("does not work for the other purpose, in either direction", () => {
    const reset = signLinkToken(SECRET, "reset", 7, expiresAt, "ada@example.org");
    expect(checkLinkToken(SECRET, "reset", verify, "ada@example.org", NOW)).toBe(false);
    expect(checkLinkToken(SECRET, "verify", reset, "ada@example.org", NOW)).toBe(false);
  });

  it("stops working when its binding changes", () => {
    expect(checkLinkToken(SECRET, "verify", verify, "ada@example.com", NOW)).toBe(false);
    expect(checkLinkToken(SECRET, "verify", verify, "", NOW)).toBe(false);
  });

  it("expires at its expiry", () => {
    expect(checkLinkToken(SECRET, "verify", verify, "ada@example.org", expiresAt - 1)).toBe(true);
    expect(checkLinkToken(SECRET, "verify", verify, "ada@example.org", expiresAt)).toBe(false);
  });

  it("is refused under another secret, or with its user id or expiry changed", () => {
    const mac = verify.split(".")[2];
    expect(checkLinkToken(OTHER_SECRET, "verify", verify, "ada@example.org", NOW)).toBe(false);
    expect(checkLinkToken(SECRET, "verify", `8.${expiresAt}.${mac}`, "ada@example.org", NOW)).toBe(false);
    expect(checkLinkToken(SECRET, "verify", `7.${expiresAt + 1}.${mac}`, "ada@example.org", NOW)).toBe(false);
    expect(checkLinkToken(SECRET, "verify", `7.0${expiresAt}.${mac}`, "ada@example.org", NOW)).toBe(false);
  });

  it.each([
    "",
    "7",
    `7.${expiresAt}`,
    `0.${expiresAt}.${"A".repeat(43)}`,
    `7.${expiresAt}.${"A".repeat(42)}`,
    `7.${expiresAt}.${"A".repeat(44)}`,
    `7.${expiresAt}.${"+".repeat(43)}`,
    `-7.${expiresAt}.${"A".repeat(43)}`,
    `${verify} `,
  ])("refuses the malformed token %j", (malformed) => {
    expect(parseLinkToken(malformed)).toBeNull();
    expect(checkLinkToken(SECRET, "verify", malformed, "ada@example.org", NOW)).toBe(false);
  });
});

describe("fingerprint and randomToken", () => {
  it("fingerprints as 64 lower-case hex characters of SHA-256, deterministically", () => {
    expect(fingerprint("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const token = randomToken();
    expect(fingerprint(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprint(token)).toBe(fingerprint(token));
    expect(fingerprint(token)).not.toBe(fingerprint(randomToken()));
  });

  it("makes 43 URL-safe characters (32 bytes), different each call", () => {
    const tokens = Array.from({ length: 20 }, randomToken);
    for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set(tokens).size).toBe(tokens.length);
  });
});

const SECRET_FOR_MALLEABILITY = "malleability-check-secret-0123456789abcdef";

describe("access token signatures are not malleable", () => {
  it("refuses a signature whose last character differs only in its unused bits", async () => {
    const token = await signAccessToken(SECRET_FOR_MALLEABILITY, {
      userId: 7,
      sessionId: "s",
      issuedAtMs: 1_000,
      expiresAt: 4_000_000_000,
    });
    const last = token.at(-1)!;
    // The 43rd base64url character of a 32-byte value carries 4 bits of data and 2 spare ones.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const twin = alphabet[alphabet.indexOf(last) ^ 1]!;
    expect(await readAccessToken(SECRET_FOR_MALLEABILITY, token, 0)).not.toBeNull();
    expect(await readAccessToken(SECRET_FOR_MALLEABILITY, `${token.slice(0, -1)}${twin}`, 0)).toBeNull();
  });
});

const OLD = "rotation-old-secret-0123456789abcdef0123456789";
const NEW = "rotation-new-secret-0123456789abcdef0123456789";
const oldToken = await signAccessToken(OLD, { ...claims, userId: 77 });

describe("rotating AUTH_TOKEN_SECRET (decisions.md, Key rotation)", () => {
  const during = [NEW, OLD] as const;

  it("accepts a token of the previous secret while it is kept, until the token expires", async () => {
    expect(await readAccessToken(during, oldToken, NOW)).toEqual({ ...claims, userId: 77 });
    expect(await readAccessToken(during, oldToken, claims.expiresAt - 1)).toEqual({ ...claims, userId: 77 });
    // After the window (15 minutes from its issue): refused, as with the current secret.
    expect(await readAccessToken(during, oldToken, claims.expiresAt)).toBeNull();
    expect(await readAccessToken(during, oldToken, claims.expiresAt + 60)).toBeNull();
  });

  it("refuses it once the previous secret is removed, even while the token is unexpired (and remembered)", async () => {
    expect(await readAccessToken(during, oldToken, NOW)).not.toBeNull();
    expect(await readAccessToken(NEW, oldToken, NOW)).toBeNull();
    expect(await readAccessToken([NEW], oldToken, NOW)).toBeNull();
  });

  it("accepts new tokens with the current secret, and never a secret that is neither", async () => {
    const fresh = await signAccessToken(NEW, claims);
    expect(await readAccessToken(during, fresh, NOW)).toEqual(claims);
    expect(await readAccessToken(during, await signAccessToken(OTHER_SECRET, claims), NOW)).toBeNull();
  });

  it("keeps email links of the previous secret working until they expire", () => {
    const expiresAt = NOW + 3600;
    const link = signLinkToken(OLD, "reset", 9, expiresAt, "binding");
    expect(checkLinkToken(during, "reset", link, "binding", NOW)).toBe(true);
    expect(checkLinkToken(during, "reset", link, "binding", expiresAt)).toBe(false);
    expect(checkLinkToken(during, "verify", link, "binding", NOW)).toBe(false);
    expect(checkLinkToken(NEW, "reset", link, "binding", NOW)).toBe(false);
    expect(checkLinkToken(during, "reset", signLinkToken(NEW, "reset", 9, expiresAt, "binding"), "binding", NOW)).toBe(true);
  });
});
