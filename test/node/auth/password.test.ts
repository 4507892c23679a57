import { describe, expect, it } from "vitest";
import { dummyPasswordHash, hashPassword, phcParams, verifyPassword } from "../../../src/auth/password";
import { ARGON2_MINIMUM } from "../../../src/config";

const cheap = { memoryKib: 64, iterations: 1, parallelism: 1 };
const NOBLE_HASH = "$argon2id$v=19$m=64,t=1,p=1$MDEyMzQ1Njc4OWFiY2RlZg$SdRmGjbeONo0WAcggHLYJQsPZOKDsoBoSGZhsGsYb0E";

describe("Argon2id password hashing", () => {
  it("uses the OWASP minimum parameters by default, in a PHC string", () => {
    const phc = hashPassword("correct horse battery staple", ARGON2_MINIMUM);
    expect(phc).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(phcParams(phc)).toEqual(ARGON2_MINIMUM);
    expect(verifyPassword("correct horse battery staple", phc)).toBe(true);
    expect(verifyPassword("correct horse battery stapl", phc)).toBe(false);
  });

  it("verifies hashes made by another Argon2id implementation (PHC interchange)", () => {
    // Made by @noble/hashes argon2id, which this service used before the WebAssembly build.
    expect(verifyPassword("interchange check", NOBLE_HASH)).toBe(true);
    expect(verifyPassword("interchange checK", NOBLE_HASH)).toBe(false);
  });

  it("hashes every byte of a non-ASCII password", () => {
    // Made by @noble/hashes from the whole UTF-8 encoding of the password.
    const reference = "$argon2id$v=19$m=64,t=1,p=1$MDEyMzQ1Njc4OWFiY2RlZg$qlyo30ywZ1sAFOKpV8Q/o8AocDNi4MGvn3y2dU2tCo4";
    expect(verifyPassword("сорока-ворона-99 ✓ 鸟", reference)).toBe(true);
    expect(verifyPassword("сорока-ворона-99 ✓ 鳥", reference)).toBe(false);
    // Same UTF-16 length, same first bytes: only the tail differs.
    const phc = hashPassword("сорока-ворона-99", cheap);
    expect(verifyPassword("сорока-во1234567", phc)).toBe(false);
  });

  it("has a dummy hash that costs a verification and never matches", () => {
    const dummy = dummyPasswordHash(cheap);
    expect(phcParams(dummy)).toEqual(cheap);
    expect(verifyPassword("", dummy)).toBe(false);
    expect(verifyPassword("anything at all", dummy)).toBe(false);
  });

  it("salts every hash", () => {
    expect(hashPassword("same password", cheap)).not.toBe(hashPassword("same password", cheap));
  });

  it("verifies with the parameters recorded in the string, not the current ones", () => {
    const phc = hashPassword("older settings", { memoryKib: 128, iterations: 2, parallelism: 1 });
    expect(verifyPassword("older settings", phc)).toBe(true);
  });

  it.each(["", "plain", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaA", "$argon2id$v=19$m=64,t=1,p=1$!!!$aGFzaA"])(
    "rejects a malformed hash %j",
    (phc) => {
      expect(verifyPassword("anything", phc)).toBe(false);
    },
  );
});
