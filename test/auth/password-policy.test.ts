import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { assertAcceptablePassword, passwordRuleViolation } from "../../src/auth/password-policy";
import { loadConfig } from "../../src/config";
import { COMMON_PASSWORDS } from "../../src/data/common-passwords";
import { createLogger } from "../../src/lib/logger";
import { ApiError } from "../../src/lib/problem";
import { PWNED } from "../support/fake-upstream-config";

const identity = { username: "ada_lovelace", email: "countess@example.org" };
const GOOD = "violet-harbour-seventeen";
/** A real entry of the common-password list (every entry is long enough to pass the length rule). */
const COMMON = COMMON_PASSWORDS.split("\n").find((p) => [...p].length >= 12)!;

describe("passwordRuleViolation", () => {
  it.each([
    ["11 characters", "a1b2c3d4e5f", /at least 12/],
    ["129 characters", "x".repeat(129), /at most 128/],
    ["6 emoji (12 UTF-16 units)", "😀".repeat(6), /at least 12/],
    ["129 emoji", "😀".repeat(129), /at most 128/],
    ["the username", "my-ada_lovelace-2024", /username/],
    ["the username in another case", "xxADA_LoveLACExx", /username/],
    ["the email's local part", "hello-countess-99", /email/],
    ["the email's local part in another case", "hello-COUNTESS-99", /email/],
    ["a common password", COMMON, /too common/],
    ["a common password, upper-cased", COMMON.toUpperCase(), /too common/],
  ])("refuses %s", (_, password, message) => {
    expect(passwordRuleViolation(password, identity)).toMatch(message);
  });

  it.each([
    ["exactly 12 characters", "k7vq2mzp9wlx"],
    ["exactly 128 characters", "x".repeat(128)],
    ["12 emoji", "😀".repeat(12)],
    ["128 emoji (256 UTF-16 units)", "😀".repeat(128)],
    ["an ordinary passphrase", GOOD],
  ])("accepts %s", (_, password) => {
    expect(passwordRuleViolation(password, identity)).toBeNull();
  });
});

describe("the common-password list", () => {
  const entries = COMMON_PASSWORDS.split("\n");

  it("holds at least the 3,000 entries ASVS 6.2.4 asks for, each one the policy would otherwise accept", () => {
    expect(entries.length).toBeGreaterThanOrEqual(3000);
    expect(new Set(entries).size).toBe(entries.length);
    const misfits = entries.filter((p) => p !== p.toLowerCase() || [...p].length < 12 || [...p].length > 128);
    expect(misfits).toEqual([]);
  });

  it("refuses every entry, and the top ones in any case", () => {
    const passed = entries.filter((p) => !/too common/.test(passwordRuleViolation(p, identity) ?? ""));
    expect(passed).toEqual([]);
    for (const p of entries.slice(0, 100)) expect(passwordRuleViolation(p.toUpperCase(), identity)).toMatch(/too common/);
  });
});

describe("assertAcceptablePassword", () => {
  const config = loadConfig(env);
  const log = createLogger({}, () => {});

  async function rejection(password: string, pointer?: string): Promise<ApiError> {
    const error = await assertAcceptablePassword(config, log, password, identity, pointer).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }

  it("refuses a breached password with a 422 at /password", async () => {
    const error = await rejection(PWNED.breached);
    expect(error.status).toBe(422);
    expect(error.code).toBe("PASSWORD_REJECTED");
    expect(error.errors?.[0]?.pointer).toBe("/password");
    expect(error.errors?.[0]?.detail).toMatch(/breach/);
  });

  it("refuses a local-rule violation at the given pointer", async () => {
    const error = await rejection("short", "/new_password");
    expect(error.status).toBe(422);
    expect(error.code).toBe("PASSWORD_REJECTED");
    expect(error.errors).toEqual([{ pointer: "/new_password", detail: expect.stringMatching(/at least 12/) }]);
  });

  it.each([
    ["an ordinary password", GOOD],
    ["a password whose breach check gets a 503", PWNED.down],
    ["a password whose breach check times out", PWNED.slow],
  ])("accepts %s", async (_, password) => {
    await expect(assertAcceptablePassword(config, log, password, identity)).resolves.toBeUndefined();
  });
});
