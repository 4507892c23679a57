import { TOTP, URI } from "otpauth/slim";
import { describe, expect, it } from "vitest";
import {
  base32Decode,
  base32Encode,
  hotp,
  isTotpShaped,
  matchTotp,
  newRecoveryCodes,
  newTotpSecret,
  normalizeRecoveryCode,
  type OtpHash,
  otpauthUri,
  RECOVERY_CODE_COUNT,
  recoveryCodeHash,
  totp,
  totpStep,
} from "../../../src/auth/totp";

const ascii = (text: string) => new TextEncoder().encode(text);

describe("HOTP (RFC 4226)", () => {
  it("matches the Appendix D test values", () => {
    const expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"];
    const key = ascii("12345678901234567890");
    expect(expected.map((_, counter) => hotp(key, counter))).toEqual(expected);
  });

  it("refuses negative or fractional counters", () => {
    expect(() => hotp(ascii("k"), -1)).toThrow();
    expect(() => hotp(ascii("k"), 1.5)).toThrow();
  });
});

describe("TOTP (RFC 6238)", () => {
  const seeds: Record<OtpHash, string> = {
    "SHA-1": "12345678901234567890",
    "SHA-256": "12345678901234567890123456789012",
    "SHA-512": "1234567890123456789012345678901234567890123456789012345678901234",
  };
  // Appendix B, in the order of the table.
  const vectors: [number, OtpHash, string][] = [
    [59, "SHA-1", "94287082"],
    [59, "SHA-256", "46119246"],
    [59, "SHA-512", "90693936"],
    [1111111109, "SHA-1", "07081804"],
    [1111111109, "SHA-256", "68084774"],
    [1111111109, "SHA-512", "25091201"],
    [1111111111, "SHA-1", "14050471"],
    [1111111111, "SHA-256", "67062674"],
    [1111111111, "SHA-512", "99943326"],
    [1234567890, "SHA-1", "89005924"],
    [1234567890, "SHA-256", "91819424"],
    [1234567890, "SHA-512", "93441116"],
    [2000000000, "SHA-1", "69279037"],
    [2000000000, "SHA-256", "90698825"],
    [2000000000, "SHA-512", "38618901"],
    [20000000000, "SHA-1", "65353130"],
    [20000000000, "SHA-256", "77737706"],
    [20000000000, "SHA-512", "47863826"],
  ];

  it.each(vectors)("at T=%i with %s gives %s", (time, hash, code) => {
    expect(totp(ascii(seeds[hash]), time, { digits: 8, hash })).toBe(code);
  });

  it("uses 30-second steps", () => {
    expect(totpStep(0)).toBe(0);
    expect(totpStep(29)).toBe(0);
    expect(totpStep(30)).toBe(1);
    expect(totpStep(20000000000)).toBe(666666666);
  });
});

describe("matchTotp", () => {
  const key = ascii("12345678901234567890");
  const now = 1_700_000_010;
  const step = totpStep(now);
  const codeAt = (offsetSteps: number) => totp(key, now + offsetSteps * 30);

  it("accepts the current step", () => {
    expect(matchTotp(key, codeAt(0), now, null)).toBe(step);
  });

  it("accepts one step either side", () => {
    expect(matchTotp(key, codeAt(-1), now, null)).toBe(step - 1);
    expect(matchTotp(key, codeAt(1), now, null)).toBe(step + 1);
  });

  it("refuses two steps either side", () => {
    expect(matchTotp(key, codeAt(-2), now, null)).toBeNull();
    expect(matchTotp(key, codeAt(2), now, null)).toBeNull();
  });

  it("refuses a replay of the accepted step and of earlier steps", () => {
    expect(matchTotp(key, codeAt(0), now, step)).toBeNull();
    expect(matchTotp(key, codeAt(-1), now, step)).toBeNull();
    expect(matchTotp(key, codeAt(0), now + 30, step)).toBeNull();
  });

  it("accepts a later step after an accepted one", () => {
    expect(matchTotp(key, codeAt(1), now, step)).toBe(step + 1);
    expect(matchTotp(key, codeAt(1), now + 30, step)).toBe(step + 1);
  });

  it("ignores spaces in the code", () => {
    const code = codeAt(0);
    expect(matchTotp(key, `${code.slice(0, 3)} ${code.slice(3)}`, now, null)).toBe(step);
  });

  it.each(["12345", "12a456", "abcdef", "1234567", "", "１２３４５６"])("refuses the malformed code %j", (code) => {
    expect(matchTotp(key, code, now, null)).toBeNull();
  });

  it("refuses a 7-digit code that starts with the right 6", () => {
    expect(matchTotp(key, `${codeAt(0)}0`, now, null)).toBeNull();
  });

  it("works at the start of time, with no previous step", () => {
    expect(matchTotp(key, totp(key, 0), 5, null)).toBe(0);
  });

  it("tells authenticator codes from recovery codes", () => {
    expect(isTotpShaped("123456")).toBe(true);
    expect(isTotpShaped("123 456")).toBe(true);
    expect(isTotpShaped("12345")).toBe(false);
    expect(isTotpShaped("abcde-fghjk")).toBe(false);
  });
});

describe("base32 (RFC 4648)", () => {
  const vectors: [string, string][] = [
    ["", ""],
    ["f", "MY"],
    ["fo", "MZXQ"],
    ["foo", "MZXW6"],
    ["foob", "MZXW6YQ"],
    ["fooba", "MZXW6YTB"],
    ["foobar", "MZXW6YTBOI"],
  ];

  it.each(vectors)("encodes %j as %j", (plain, encoded) => {
    expect(base32Encode(ascii(plain))).toBe(encoded);
    expect(base32Decode(encoded)).toEqual(ascii(plain));
  });

  it("decodes lower case and padding", () => {
    expect(base32Decode("mzxw6ytboi")).toEqual(ascii("foobar"));
    expect(base32Decode("MZXW6YTBOI======")).toEqual(ascii("foobar"));
    expect(base32Decode("MY======")).toEqual(ascii("f"));
  });

  it("round-trips random secrets", () => {
    for (let i = 0; i < 20; i++) {
      const secret = newTotpSecret();
      expect(secret).toHaveLength(20);
      const encoded = base32Encode(secret);
      expect(encoded).toMatch(/^[A-Z2-7]{32}$/);
      expect(base32Decode(encoded)).toEqual(secret);
    }
  });

  it.each(["1", "8", "MZ1W", "MY=A", "MZX W6", "M", "MZX"])("rejects %j", (text) => {
    expect(() => base32Decode(text)).toThrow();
  });
});

describe("otpauthUri", () => {
  // Parameters are read by name; otpauth writes the issuer first.
  it("builds the URI authenticator apps expect", () => {
    expect(otpauthUri({ secret: ascii("foobar"), issuer: "ReLab", account: "ada@example.com" })).toBe(
      "otpauth://totp/ReLab:ada%40example.com?issuer=ReLab&secret=MZXW6YTBOI&algorithm=SHA1&digits=6&period=30",
    );
  });

  it("percent-encodes the issuer and account", () => {
    const uri = otpauthUri({ secret: ascii("f"), issuer: "Re Lab: test", account: "a&b?c" });
    expect(uri).toBe("otpauth://totp/Re%20Lab%3A%20test:a%26b%3Fc?issuer=Re%20Lab%3A%20test&secret=MY&algorithm=SHA1&digits=6&period=30");
  });

  it("reads back as the same seed, account and parameters, giving the codes the service accepts", () => {
    const secret = newTotpSecret();
    // An issuer with a colon (above) cannot be told from the account when read back; the service's is "relab".
    const parsed = URI.parse(otpauthUri({ secret, issuer: "Re Lab", account: "ada+mfa@example.com" }));
    expect(parsed).toBeInstanceOf(TOTP);
    const read = parsed as TOTP;
    expect(read.secret.bytes).toEqual(secret);
    expect({ issuer: read.issuer, label: read.label, algorithm: read.algorithm, digits: read.digits, period: read.period }).toEqual({
      issuer: "Re Lab",
      label: "ada+mfa@example.com",
      algorithm: "SHA1",
      digits: 6,
      period: 30,
    });
    const now = 1_700_000_010;
    expect(matchTotp(secret, read.generate({ timestamp: now * 1000 }), now, null)).toBe(totpStep(now));
  });
});

describe("recovery codes", () => {
  const format = /^[a-hjkmnp-z2-9]{5}-[a-hjkmnp-z2-9]{5}$/;

  it("makes ten distinct codes in the display format", () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(new Set(codes).size).toBe(RECOVERY_CODE_COUNT);
    for (const code of codes) expect(code).toMatch(format);
  });

  it("uses the whole alphabet", () => {
    const seen = new Set(newRecoveryCodes(200).join("").replaceAll("-", ""));
    expect([...seen].sort().join("")).toBe("23456789abcdefghjkmnpqrstuvwxyz");
  });

  it("normalizes what people type", () => {
    expect(normalizeRecoveryCode("abcde-fghjk")).toBe("abcdefghjk");
    expect(normalizeRecoveryCode("ABCDE-FGHJK")).toBe("abcdefghjk");
    expect(normalizeRecoveryCode(" abcde fghjk ")).toBe("abcdefghjk");
    expect(normalizeRecoveryCode("abcdefghjk")).toBe("abcdefghjk");
    for (const code of newRecoveryCodes(3)) expect(normalizeRecoveryCode(code)).toBe(code.replace("-", ""));
  });

  it.each(["", "abcde-fghj", "abcde-fghjkm", "abcde-fghj0", "abcde-fghjo", "abcde-fghj1", "abcde-fghjl", "abcde-fghji", "abcde_fghjk"])(
    "refuses %j",
    (input) => {
      expect(normalizeRecoveryCode(input)).toBeNull();
    },
  );

  it("hashes to stable SHA-256 hex", () => {
    const hash = recoveryCodeHash("abcdefghjk");
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(recoveryCodeHash("abcdefghjk")).toBe(hash);
    expect(recoveryCodeHash("abcdefghjm")).not.toBe(hash);
    expect(recoveryCodeHash("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});
