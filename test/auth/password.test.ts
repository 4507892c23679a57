import { describe, expect, it } from "vitest";
import { hashPassword, phcParams, verifyPassword } from "../../src/auth/password";
import { ARGON2_MINIMUM } from "../../src/config";

const cheap = { memoryKib: 64, iterations: 1, parallelism: 1 };

describe("Argon2id password hashing", () => {
  it("uses the OWASP minimum parameters by default, in a PHC string", () => {
    const phc = hashPassword("correct horse battery staple", ARGON2_MINIMUM);
    expect(phc).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(phcParams(phc)).toEqual(ARGON2_MINIMUM);
    expect(verifyPassword("correct horse battery staple", phc)).toBe(true);
    expect(verifyPassword("correct horse battery stapl", phc)).toBe(false);
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
