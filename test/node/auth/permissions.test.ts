import type { Context } from "hono";
import { describe, expect, it } from "vitest";
import { assertMayModify, hasAdminPowers, isModeration, ownerVisibleTo } from "../../../src/auth/permissions";
import type { SessionUser } from "../../../src/auth/session-user";
import type { AppEnv } from "../../../src/env";
import { ApiError } from "../../../src/lib/problem";
import { requireAdmin, requireUser, requireVerified } from "../../../src/middleware/guards";
import { VERIFIED_CONTRIBUTOR } from "./session-user-fixture";

const verified: SessionUser = VERIFIED_CONTRIBUTOR;
const unverified: SessionUser = { ...verified, isVerified: false };
const superuserWithoutTotp: SessionUser = { ...verified, id: 1, isSuperuser: true, role: "lab" };
const admin: SessionUser = { ...superuserWithoutTotp, totpEnabled: true };
const notFound = () => new ApiError(404, { code: "PRODUCT_NOT_FOUND", detail: "No such product." });

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

describe("superuser powers", () => {
  it("need both is_superuser and TOTP", () => {
    expect(hasAdminPowers(admin)).toBe(true);
    expect(hasAdminPowers(superuserWithoutTotp)).toBe(false);
    expect(hasAdminPowers({ ...verified, totpEnabled: true })).toBe(false);
    expect(hasAdminPowers(null)).toBe(false);
  });

  it("requireAdmin: 403 for an ordinary user, 403 ADMIN_TOTP_REQUIRED for a superuser without TOTP", () => {
    expect(thrown(() => requireAdmin(contextWith(verified))).code).toBe("SUPERUSER_REQUIRED");
    const refused = thrown(() => requireAdmin(contextWith(superuserWithoutTotp)));
    expect([refused.status, refused.code]).toEqual([403, "ADMIN_TOTP_REQUIRED"]);
    expect(requireAdmin(contextWith(admin))).toBe(admin);
    expect(thrown(() => requireAdmin(contextWith(null))).status).toBe(401);
  });

  it("the write rule: owners do anything; superusers with TOTP correct but never add; everyone else 404", () => {
    const record = { ownerId: verified.id };
    expect(() => assertMayModify(verified, record, notFound, "add")).not.toThrow();
    expect(() => assertMayModify(admin, record, notFound, "correct")).not.toThrow();
    expect(thrown(() => assertMayModify(admin, record, notFound, "add")).status).toBe(404);
    expect(thrown(() => assertMayModify(superuserWithoutTotp, record, notFound, "correct")).status).toBe(404);
    expect(thrown(() => assertMayModify({ ...verified, id: 8 }, record, notFound)).status).toBe(404);
    expect(thrown(() => assertMayModify(verified, null, notFound)).status).toBe(404);
    expect(isModeration(admin, record)).toBe(true);
    expect(isModeration(verified, record)).toBe(false);
  });

  it("private owners are visible to their owner and to superusers with TOTP only", () => {
    const owner = { ownerId: verified.id, ownerUsername: "ada", ownerVisibility: "private" as const };
    expect(ownerVisibleTo(verified, owner)).toBe(true);
    expect(ownerVisibleTo(admin, owner)).toBe(true);
    expect(ownerVisibleTo(superuserWithoutTotp, owner)).toBe(false);
    expect(ownerVisibleTo(null, owner)).toBe(false);
  });
});
