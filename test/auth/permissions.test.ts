import type { Context } from "hono";
import { describe, expect, it } from "vitest";
import { requireUser, requireVerified } from "../../src/auth/permissions";
import type { AppEnv } from "../../src/env";
import { ApiError } from "../../src/lib/problem";
import type { SessionUser } from "../../src/services/sessions";

const verified: SessionUser = {
  id: 7,
  email: "ada@example.org",
  username: "ada",
  hashedPassword: null,
  isActive: true,
  isVerified: true,
  isSuperuser: false,
  role: "contributor",
  profileVisibility: "public",
  lastLoginAt: null,
  uploadFileCount: 0,
  uploadTotalBytes: 0,
  tokensValidAfter: 0,
  createdAt: 1_750_000_000,
  updatedAt: 1_750_000_000,
};
const unverified: SessionUser = { ...verified, isVerified: false };

/** The permission checks only read `c.get("user")`. */
const contextWith = (user: SessionUser | null) =>
  ({ get: (key: string) => (key === "user" ? user : undefined) }) as unknown as Context<AppEnv>;

function thrown(check: () => unknown): ApiError {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error("expected the check to throw");
}

describe("permission checks", () => {
  it.each([
    ["requireUser", requireUser],
    ["requireVerified", requireVerified],
  ])("%s refuses an anonymous request with a 401 and a Bearer challenge", (_, check) => {
    const error = thrown(() => check(contextWith(null)));
    expect(error.status).toBe(401);
    expect(error.code).toBe("AUTHENTICATION_REQUIRED");
    expect(error.headers["WWW-Authenticate"]).toBe('Bearer realm="relab"');
  });

  it("requireUser returns any signed-in user, verified or not", () => {
    expect(requireUser(contextWith(unverified))).toBe(unverified);
    expect(requireUser(contextWith(verified))).toBe(verified);
  });

  it("requireVerified refuses an unverified user with a 403", () => {
    const error = thrown(() => requireVerified(contextWith(unverified)));
    expect(error.status).toBe(403);
    expect(error.code).toBe("EMAIL_NOT_VERIFIED");
    expect(error.headers).toEqual({});
  });

  it("requireVerified returns a verified user", () => {
    expect(requireVerified(contextWith(verified))).toBe(verified);
  });
});
