import { describe, expect, it } from "vitest";
import { isDisposableEmail, usernameViolation } from "../../../src/auth/account-names";

describe("usernameViolation", () => {
  it.each([
    ["2 characters", "ab"],
    ["50 characters", "a".repeat(50)],
    ["digits and underscores", "lab_42"],
  ])("accepts %s", (_, username) => {
    expect(usernameViolation(username)).toBeNull();
  });

  it.each([
    ["empty", ""],
    ["1 character", "a"],
    ["51 characters", "a".repeat(51)],
    ["upper case", "Ada"],
    ["a hyphen", "ada-l"],
    ["a space", "ada l"],
    ["a dot", "ada.l"],
    ["a trailing newline", "ada\n"],
    ["a non-ASCII letter", "adä"],
  ])("refuses %s", (_, username) => {
    expect(usernameViolation(username)).toMatch(/2 to 50 characters/);
  });

  it.each(["admin", "api", "me", "root", "support", "users", "www", "null", "undefined"])("refuses the reserved %j", (username) => {
    expect(usernameViolation(username)).toBe("This username is reserved.");
  });

  it("reserves only whole names", () => {
    expect(usernameViolation("admin_ada")).toBeNull();
  });
});

describe("isDisposableEmail", () => {
  it.each([
    ["a listed domain", "someone@mailinator.com", true],
    ["a subdomain of a listed domain", "someone@inbox.mailinator.com", true],
    ["upper case", "SomeOne@MAILINATOR.COM", true],
    ["an ordinary provider", "someone@gmail.com", false],
    ["a look-alike of a listed domain (unlisted)", "someone@mymailinator.com", false],
    ["a listed domain as a left label only", "someone@mailinator.com.example.org", false],
    ["no domain at all", "someone", false],
  ])("%s: %s -> %s", (_, address, disposable) => {
    expect(isDisposableEmail(address)).toBe(disposable);
  });
});
