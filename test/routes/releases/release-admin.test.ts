import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, bearerLogin, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import { adminHeaders, buildRow, type ReleaseBody, readRelease, requestRelease } from "../../support/releases";

let admin: Record<string, string>;

beforeAll(async () => {
  admin = await adminHeaders();
}, 30_000);

describe("POST /v1/admin/releases", () => {
  it("is refused to anyone but a superuser with TOTP", async () => {
    const body = { version: "7.0", title: "Not allowed" };
    await expectProblem(await requestRelease({}, body), 401, "AUTHENTICATION_REQUIRED");
    const contributor = await verifiedUser("plain");
    await expectProblem(await requestRelease(bearer(contributor.tokens.access_token), body), 403, "SUPERUSER_REQUIRED");
    // A superuser who has not enrolled TOTP.
    const superuser = await verifiedUser("super");
    await env.DB.prepare("UPDATE users SET is_superuser = 1, role = 'lab' WHERE id = ?").bind(superuser.id).run();
    const tokens = await bearerLogin(superuser);
    await expectProblem(await requestRelease(bearer(tokens.access_token), body), 403, "ADMIN_TOTP_REQUIRED");
    await expectProblem(
      await api("/v1/admin/releases/7.0/retry", { method: "POST", headers: bearer(tokens.access_token) }),
      403,
      "ADMIN_TOTP_REQUIRED",
    );
    await expectProblem(
      await api("/v1/admin/releases/7.0/retry", { method: "POST", headers: bearer(contributor.tokens.access_token) }),
      403,
      "SUPERUSER_REQUIRED",
    );
    // Nothing was made, and a superuser without TOTP sees no unpublished release either.
    expect(await buildRow("7.0")).toBeNull();
    await expectProblem(await readRelease("7.0", bearer(tokens.access_token)), 404, "NOT_FOUND");
  });

  it("validates the version, title and licence with 422 at the member", async () => {
    const cases: [unknown, string][] = [
      [{ version: "", title: "t" }, "/version"],
      [{ version: "v1", title: "t" }, "/version"],
      [{ version: ".1", title: "t" }, "/version"],
      [{ version: "1/2", title: "t" }, "/version"],
      [{ version: "1 2", title: "t" }, "/version"],
      [{ version: "1_2", title: "t" }, "/version"],
      [{ version: `1${"0".repeat(32)}`, title: "t" }, "/version"],
      [{ version: 1, title: "t" }, "/version"],
      [{ version: "1.0" }, "/title"],
      [{ version: "1.0", title: "" }, "/title"],
      [{ version: "1.0", title: "line\nbreak" }, "/title"],
      [{ version: "1.0", title: "t", licence: "MIT" }, "/licence"],
      [{ version: "1.0", title: "t", description: "nul\u0000" }, "/description"],
      [{ version: "1.0", title: "t", status: "published" }, "/status"],
    ];
    for (const [body, pointer] of cases) {
      const problem = await expectProblem(await requestRelease(admin, body), 422, "VALIDATION_FAILED");
      expect(
        problem.errors?.map((e) => e.pointer),
        JSON.stringify(body),
      ).toContain(pointer);
    }
    expect(await env.DB.prepare("SELECT count(*) AS n FROM releases").first<{ n: number }>()).toEqual({ n: 0 });
  });

  it("answers 202 with the release building, in one round trip after the caller's check, and 409 for a version taken", async () => {
    const version = `8.0-rc.1-${"x".repeat(23)}`;
    expect(version).toHaveLength(32);
    const created = await requestRelease(admin, {
      version,
      title: "Longest version",
      description: "Line one\nline two",
      licence: "ODbL-1.0",
    });
    expect(created.status).toBe(202);
    expect(roundTrips(created)).toBe(2);
    const body = (await created.json()) as ReleaseBody;
    expect(body).toMatchObject({
      version,
      title: "Longest version",
      description: "Line one\nline two",
      licence: "ODbL-1.0",
      status: "building",
      citation: null,
      snapshot_at: null,
      published_at: null,
      counts: { records: null, base_products: null, images: null, record_materials: null },
      progress: { records_written: 0 },
      failure_reason: null,
      files: [],
    });
    const [again, concurrent] = await Promise.all([
      requestRelease(admin, { version, title: "Again" }),
      requestRelease(admin, { version, title: "Again, at once" }),
    ]);
    for (const response of [again, concurrent]) {
      const problem = await expectProblem(response, 409, "ALREADY_EXISTS");
      expect(problem.errors).toEqual([{ pointer: "/version", detail: "This version is taken." }]);
    }
  });
});
