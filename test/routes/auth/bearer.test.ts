import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fingerprint } from "../../../src/auth/tokens";
import { bearer, bearerLogin, me, newIdentity, postJson, registerUser, type TokenPair } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";

const refresh = (refresh_token: string) => postJson("/v1/auth/bearer/refresh", { refresh_token });

describe("bearer login", () => {
  it("signs in with the email (JSON) or the username (form), returning a token pair", async () => {
    const user = await registerUser();
    const byEmail = await postJson("/v1/auth/bearer/login", { username: user.email.toUpperCase(), password: user.password });
    expect(byEmail.status).toBe(200);
    expect(byEmail.headers.get("cache-control")).toBe("no-store");
    const pair = (await byEmail.json()) as Record<string, unknown>;
    expect(pair).toEqual({
      access_token: expect.stringMatching(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/),
      refresh_token: expect.stringMatching(/^[\w-]{43}$/),
      token_type: "bearer",
      expires_in: 900,
    });
    expect(roundTrips(byEmail)).toBe(2);

    const form = new URLSearchParams({ grant_type: "password", username: user.username, password: user.password });
    const byUsername = await api("/v1/auth/bearer/login", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
    expect(byUsername.status).toBe(200);

    const account = await me(pair.access_token as string);
    expect(account.status).toBe(200);
    expect(roundTrips(account)).toBe(1);
    const body = (await account.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ id: user.id, username: user.username, is_verified: false, role: "contributor" });
    expect(body.last_login_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it("stores only a SHA-256 fingerprint of the refresh token", async () => {
    const user = await registerUser();
    const pair = await bearerLogin(user);
    const rows = await env.DB.prepare("SELECT fingerprint FROM refresh_tokens WHERE user_id = ?").bind(user.id).all();
    expect(rows.results).toEqual([{ fingerprint: fingerprint(pair.refresh_token) }]);
    expect(JSON.stringify(rows.results)).not.toContain(pair.refresh_token);
  });

  it("answers unknown, wrong-password and inactive accounts with identical bytes", async () => {
    const user = await registerUser();
    const inactive = await registerUser();
    await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(inactive.id).run();
    const attempts = [
      { username: "nobody-here@example.org", password: user.password },
      { username: user.email, password: "wrong-password-entirely" },
      { username: inactive.email, password: inactive.password },
      { username: "no_such_user", password: user.password },
    ];
    const snapshots = [];
    for (const attempt of attempts) {
      const response = await postJson("/v1/auth/bearer/login", attempt);
      const requestId = response.headers.get("x-request-id")!;
      const body = await response.clone().text();
      await expectProblem(response, 400, "LOGIN_BAD_CREDENTIALS");
      // The bookmark names the database state the request saw (the latest, on the primary), whoever asked.
      // Server-Timing is development's (rows read differ with what exists); production sends none.
      const headers = [...response.headers].filter(([name]) => !["x-request-id", "x-d1-bookmark", "server-timing"].includes(name));
      snapshots.push({ status: response.status, headers, body: body.replace(requestId, "<id>") });
    }
    for (const snapshot of snapshots.slice(1)) expect(snapshot).toEqual(snapshots[0]);
  });

  it("refuses a body with unknown members, and an empty body, with 422", async () => {
    await expectProblem(await postJson("/v1/auth/bearer/login", { username: "a", password: "b", role: "lab" }), 422, "VALIDATION_FAILED");
    await expectProblem(await api("/v1/auth/bearer/login", { method: "POST" }), 422, "VALIDATION_FAILED");
  });
});

describe("bearer refresh", () => {
  it("rotates the refresh token, keeps the absolute expiry, and refuses the spent one", async () => {
    const user = await registerUser();
    const first = await bearerLogin(user);
    const sessionExpiry = () =>
      env.DB.prepare("SELECT DISTINCT session_expires_at AS at FROM refresh_tokens WHERE user_id = ?").bind(user.id).all();
    const before = (await sessionExpiry()).results;

    const rotated = await refresh(first.refresh_token);
    expect(rotated.status).toBe(200);
    expect(roundTrips(rotated)).toBe(1);
    const second = (await rotated.json()) as TokenPair;
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await me(second.access_token)).status).toBe(200);
    expect((await sessionExpiry()).results).toEqual(before);

    await expectProblem(await refresh(first.refresh_token), 401, "REFRESH_TOKEN_INVALID");
    // Within the grace period a replay is refused but the session lives on.
    expect((await refresh(second.refresh_token)).status).toBe(200);
  });

  it("ends the whole session when a spent token comes back after the grace period", async () => {
    const user = await registerUser();
    const first = await bearerLogin(user);
    const second = (await (await refresh(first.refresh_token)).json()) as TokenPair;
    await env.DB.prepare("UPDATE refresh_tokens SET rotated_at = rotated_at - 60 WHERE rotated_at IS NOT NULL").run();
    await expectProblem(await refresh(first.refresh_token), 401, "REFRESH_TOKEN_INVALID");
    await expectProblem(await refresh(second.refresh_token), 401, "REFRESH_TOKEN_INVALID");
    await expectProblem(await me(second.access_token), 401, "INVALID_TOKEN");
  });

  it("lets exactly one of two concurrent refreshes with the same token win", async () => {
    const user = await registerUser();
    const pair = await bearerLogin(user);
    const results = await Promise.all([refresh(pair.refresh_token), refresh(pair.refresh_token), refresh(pair.refresh_token)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401]);
  });

  it("refuses a refresh token past its inactivity or absolute expiry", async () => {
    const user = await registerUser();
    const inactive = await bearerLogin(user);
    const expired = await bearerLogin(user);
    await env.DB.prepare("UPDATE refresh_tokens SET expires_at = unixepoch() - 1 WHERE fingerprint = ?")
      .bind(fingerprint(inactive.refresh_token))
      .run();
    await env.DB.prepare("UPDATE refresh_tokens SET session_expires_at = unixepoch() - 1 WHERE fingerprint = ?")
      .bind(fingerprint(expired.refresh_token))
      .run();
    await expectProblem(await refresh(inactive.refresh_token), 401, "REFRESH_TOKEN_INVALID");
    await expectProblem(await refresh(expired.refresh_token), 401, "REFRESH_TOKEN_INVALID");
  });
});

describe("bearer logout and revocation", () => {
  it("logout revokes the refresh token and the session's access token at once", async () => {
    const user = await registerUser();
    const pair = await bearerLogin(user);
    const other = await bearerLogin(user);
    const response = await postJson("/v1/auth/bearer/logout", { refresh_token: pair.refresh_token });
    expect(response.status).toBe(204);
    await expectProblem(await refresh(pair.refresh_token), 401, "REFRESH_TOKEN_INVALID");
    await expectProblem(await me(pair.access_token), 401, "INVALID_TOKEN");
    // Other sessions of the same account are untouched.
    expect((await me(other.access_token)).status).toBe(200);
    // Logging out twice is not an error.
    expect((await postJson("/v1/auth/bearer/logout", { refresh_token: pair.refresh_token })).status).toBe(204);
  });

  it("revoke-all refuses every earlier access token on its next request, and new logins work", async () => {
    const user = await registerUser();
    const a = await bearerLogin(user);
    const b = await bearerLogin(user);
    const response = await api("/v1/auth/sessions/revoke-all", { method: "POST", headers: bearer(a.access_token) });
    expect(response.status).toBe(204);
    expect(response.headers.get("clear-site-data")).toBe('"cache", "cookies", "storage"');
    for (const pair of [a, b]) {
      await expectProblem(await me(pair.access_token), 401, "INVALID_TOKEN");
      await expectProblem(await refresh(pair.refresh_token), 401, "REFRESH_TOKEN_INVALID");
    }
    const fresh = await bearerLogin(user);
    expect((await me(fresh.access_token)).status).toBe(200);
  });

  it("refuses an access token issued before the revocation epoch even while its session row exists", async () => {
    const user = await registerUser();
    const pair = await bearerLogin(user);
    // Only the epoch moves (the refresh rows stay), to show the epoch alone revokes.
    await env.DB.prepare("UPDATE users SET tokens_valid_after = CAST(unixepoch('subsec') * 1000 AS INTEGER) + 1 WHERE id = ?")
      .bind(user.id)
      .run();
    await expectProblem(await me(pair.access_token), 401, "INVALID_TOKEN");
  });

  it("answers 401 with WWW-Authenticate without credentials or with a bad token", async () => {
    const anonymous = await api("/v1/users/me");
    await expectProblem(anonymous, 401, "AUTHENTICATION_REQUIRED");
    expect(anonymous.headers.get("www-authenticate")).toBe('Bearer realm="relab"');
    const forged = await me(`${(await bearerLogin(await registerUser())).access_token}x`);
    await expectProblem(forged, 401, "INVALID_TOKEN");
    expect(forged.headers.get("www-authenticate")).toContain('error="invalid_token"');
    await expectProblem(await api("/v1/users/me", { headers: { authorization: "Basic YTpi" } }), 401, "INVALID_TOKEN");
  });

  it("requires the new login to name an existing identity", async () => {
    const identity = newIdentity();
    await expectProblem(
      await postJson("/v1/auth/bearer/login", { username: identity.email, password: identity.password }),
      400,
      "LOGIN_BAD_CREDENTIALS",
    );
  });
});
