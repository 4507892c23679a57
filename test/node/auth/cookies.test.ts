import { describe, expect, it } from "vitest";
import {
  ACCESS_COOKIE,
  clearedSessionCookies,
  hasSessionCookie,
  REFRESH_COOKIE,
  readCookie,
  sessionCookies,
} from "../../../src/auth/cookies";

describe("readCookie", () => {
  it.each([
    ["the only cookie", "a=1", "a", "1"],
    ["among several", "x=0; a=1; b=2", "a", "1"],
    ["with extra spaces", "  x=0 ;   a = 1 ;b=2", "a", "1"],
    ["the first of duplicates", "a=1; a=2", "a", "1"],
    ["a value holding '='", "a=b=c; d=e", "a", "b=c"],
    ["an empty value", "a=; b=2", "a", ""],
    ["a missing cookie", "x=0; b=2", "a", undefined],
    ["a name that only starts the same", "ab=1", "a", undefined],
    ["a bare word", "a; b=2", "a", undefined],
    ["an empty header", "", "a", undefined],
    ["no header", undefined, "a", undefined],
  ])("%s", (_, header, name, value) => {
    expect(readCookie(header, name)).toBe(value);
  });
});

describe("hasSessionCookie", () => {
  it.each([
    [`${ACCESS_COOKIE}=token`, true],
    [`theme=dark; ${REFRESH_COOKIE}=token`, true],
    ["theme=dark; relab-auth=token", false],
    ["", false],
    [undefined, false],
  ])("%j -> %s", (header, expected) => {
    expect(hasSessionCookie(header)).toBe(expected);
  });
});

describe("session cookie headers", () => {
  it("sets both cookies, host-only and HttpOnly, the access one for 15 minutes", () => {
    expect(sessionCookies("acc.ess.tok", "refresh-tok", 2_592_000)).toEqual([
      "__Host-relab-auth=acc.ess.tok; Max-Age=900; Path=/; Secure; HttpOnly; SameSite=Lax",
      "__Host-relab-refresh=refresh-tok; Max-Age=2592000; Path=/; Secure; HttpOnly; SameSite=Lax",
    ]);
  });

  it("clears both cookies with the same attributes", () => {
    expect(clearedSessionCookies()).toEqual([
      "__Host-relab-auth=; Max-Age=0; Path=/; Secure; HttpOnly; SameSite=Lax",
      "__Host-relab-refresh=; Max-Age=0; Path=/; Secure; HttpOnly; SameSite=Lax",
    ]);
  });
});
