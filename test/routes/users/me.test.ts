import { describe, expect, it } from "vitest";
import { bearerLogin, lastEmail, linkToken, me, newIdentity, patchMe, postJson, registerUser, verifiedUser } from "../../support/accounts";
import { PWNED } from "../../support/fake-upstream-config";
import { expectProblem, roundTrips } from "../../support/http";

describe("GET /v1/users/me", () => {
  it("reports the account, its preferences, quotas and usage, and never the password hash", async () => {
    const user = await verifiedUser();
    const response = await me(user.tokens.access_token);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual({
      id: user.id,
      email: user.email,
      username: user.username,
      is_active: true,
      is_verified: true,
      is_superuser: false,
      role: "contributor",
      totp_enabled: false,
      has_usable_password: true,
      preferences: { profile_visibility: "public" },
      // The contributor terms, not accepted yet (test/routes/releases/contributor-terms.test.ts).
      terms_accepted_version: null,
      terms_accepted_at: null,
      orcid: null,
      release_credit: false,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
      last_login_at: expect.stringMatching(/Z$/),
      upload_quota_files: 1000,
      upload_quota_bytes: 3 * 1024 ** 3,
      upload_file_count: 0,
      upload_total_bytes: 0,
      image_upload_max_bytes: 10 * 1024 ** 2,
      image_upload_max_pixels: 12_582_912,
    });
  });
});

describe("PATCH /v1/users/me", () => {
  it("changes username and profile visibility without a step-up, in two round trips", async () => {
    const user = await verifiedUser();
    const username = `${user.username}_x`.slice(0, 50);
    const response = await patchMe(user.tokens.access_token, { username, preferences: { profile_visibility: "private" } });
    expect(response.status).toBe(200);
    expect(roundTrips(response)).toBe(2); // token check, update
    expect(await response.json()).toMatchObject({ username, preferences: { profile_visibility: "private" } });
    // Nothing was revoked.
    expect((await me(user.tokens.access_token)).status).toBe(200);
  });

  it.each([{ role: "lab" }, { is_superuser: true }, { is_verified: true }, { is_active: false }, { id: 7 }, { owner_id: 1 }])(
    "refuses the privileged member %j with 422",
    async (member) => {
      const user = await verifiedUser();
      const problem = await expectProblem(await patchMe(user.tokens.access_token, member), 422, "VALIDATION_FAILED");
      expect(problem.errors?.[0]?.pointer).toBe(`/${Object.keys(member)[0]}`);
    },
  );

  it("refuses a taken or reserved username", async () => {
    const a = await verifiedUser();
    const b = await verifiedUser();
    await expectProblem(await patchMe(a.tokens.access_token, { username: b.username }), 409, "USERNAME_TAKEN");
    await expectProblem(await patchMe(a.tokens.access_token, { username: "admin" }), 422, "USERNAME_INVALID");
  });

  it("needs current_password for an email or password change: missing 400, wrong 403, never 401", async () => {
    const user = await verifiedUser();
    const changes = [{ email: newIdentity().email }, { password: "gentle-harbor-93-kites" }];
    for (const change of changes) {
      await expectProblem(await patchMe(user.tokens.access_token, change), 400, "CURRENT_PASSWORD_REQUIRED");
      await expectProblem(
        await patchMe(user.tokens.access_token, { ...change, current_password: "not-the-password" }),
        403,
        "CURRENT_PASSWORD_INVALID",
      );
    }
    // The session is still fine after the refusals.
    expect((await me(user.tokens.access_token)).status).toBe(200);
  });

  it("changes the email: unverified, every token revoked, verification to the new address, notice to the old", async () => {
    const user = await verifiedUser();
    const other = await bearerLogin(user);
    const newEmail = newIdentity("moved").email;
    const response = await patchMe(user.tokens.access_token, { email: newEmail, current_password: user.password });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ email: newEmail, is_verified: false });

    for (const session of [user.tokens, other]) {
      await expectProblem(await me(session.access_token), 401, "INVALID_TOKEN");
      await expectProblem(
        await postJson("/v1/auth/bearer/refresh", { refresh_token: session.refresh_token }),
        401,
        "REFRESH_TOKEN_INVALID",
      );
    }
    const notice = await lastEmail(user.email, "email address was changed");
    expect(notice.text).not.toContain(newEmail);
    const token = linkToken(await lastEmail(newEmail, "Confirm your email"), "verify");
    expect((await postJson("/v1/auth/verify", { token })).status).toBe(200);
    await bearerLogin({ email: newEmail, password: user.password });
  });

  it("invalidates verification links sent to the previous address", async () => {
    const user = await registerUser();
    const oldToken = linkToken(await lastEmail(user.email, "Confirm your email"), "verify");
    const session = await bearerLogin(user);
    const newEmail = newIdentity("moved").email;
    expect((await patchMe(session.access_token, { email: newEmail, current_password: user.password })).status).toBe(200);
    await expectProblem(await postJson("/v1/auth/verify", { token: oldToken }), 400, "VERIFY_TOKEN_INVALID");
  });

  it("refuses an email another account holds (also as an alias) and disposable addresses", async () => {
    const a = await verifiedUser();
    const b = await verifiedUser();
    const alias = b.email.replace("@", "+alias@");
    await expectProblem(
      await patchMe(a.tokens.access_token, { email: alias, current_password: a.password }),
      409,
      "EMAIL_ALREADY_REGISTERED",
    );
    await expectProblem(
      await patchMe(a.tokens.access_token, { email: "x@mailinator.com", current_password: a.password }),
      400,
      "DISPOSABLE_EMAIL",
    );
  });

  it("changes the password: rules apply, every token is revoked, a notice is sent", async () => {
    const user = await verifiedUser();
    await expectProblem(
      await patchMe(user.tokens.access_token, { password: PWNED.breached, current_password: user.password }),
      422,
      "PASSWORD_REJECTED",
    );
    const password = "gentle-harbor-94-kites";
    const response = await patchMe(user.tokens.access_token, { password, current_password: user.password });
    expect(response.status).toBe(200);
    await expectProblem(await me(user.tokens.access_token), 401, "INVALID_TOKEN");
    const notice = await lastEmail(user.email, "password was changed");
    expect(notice.text).not.toContain(password);
    await bearerLogin({ email: user.email, password });
  });

  it("lets an unverified account update itself", async () => {
    const user = await registerUser();
    const session = await bearerLogin(user);
    const response = await patchMe(session.access_token, { preferences: { profile_visibility: "community" } });
    expect(response.status).toBe(200);
  });
});
