import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, bearerLogin, me, newIdentity, postJson, registerUser } from "../../support/accounts";
import { api, expectProblem, getSetCookie } from "../../support/http";

const ACCESS = "__Host-relab-auth";
const REFRESH = "__Host-relab-refresh";
const CLEAR_SITE_DATA = '"cache", "cookies", "storage"';
const THIRTY_DAYS = 30 * 24 * 3600;

interface SetCookie {
  name: string;
  value: string;
  /** Attribute names lower-cased; flag attributes map to "". */
  attributes: Record<string, string>;
}

function parseSetCookie(header: string): SetCookie {
  const [pair = "", ...rest] = header.split(";");
  const eq = pair.indexOf("=");
  const attributes: Record<string, string> = {};
  for (const part of rest) {
    const at = part.indexOf("=");
    const key = (at < 0 ? part : part.slice(0, at)).trim().toLowerCase();
    attributes[key] = at < 0 ? "" : part.slice(at + 1).trim();
  }
  return { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), attributes };
}

function setCookies(response: Response): SetCookie[] {
  return getSetCookie(response).map(parseSetCookie);
}

const attributes = (maxAge: string) => ({ "max-age": maxAge, path: "/", secure: "", httponly: "", samesite: "Lax" });

/** Asserts the response sets exactly the two session cookies and returns their values. */
function expectSessionCookies(response: Response): { access: string; refresh: string } {
  const cookies = setCookies(response);
  expect(cookies.map((cookie) => cookie.name)).toEqual([ACCESS, REFRESH]);
  const [access, refresh] = cookies as [SetCookie, SetCookie];
  expect(access.value).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
  expect(access.attributes).toEqual(attributes("900"));
  expect(refresh.value).toMatch(/^[\w-]{43}$/);
  const refreshMaxAge = Number(refresh.attributes["max-age"]);
  expect(refreshMaxAge).toBeGreaterThan(THIRTY_DAYS - 60);
  expect(refreshMaxAge).toBeLessThanOrEqual(THIRTY_DAYS);
  expect(refresh.attributes).toEqual(attributes(String(refreshMaxAge)));
  return { access: access.value, refresh: refresh.value };
}

/** Asserts the response deletes both session cookies (and sets nothing else). */
function expectClearedCookies(response: Response): void {
  const cookies = setCookies(response);
  expect(cookies.map((cookie) => cookie.name).sort()).toEqual([ACCESS, REFRESH].sort());
  for (const cookie of cookies) {
    expect(cookie.value).toBe("");
    expect(cookie.attributes).toEqual(attributes("0"));
  }
}

function cookie(values: { access?: string; refresh?: string }): Record<string, string> {
  const parts = [];
  if (values.access !== undefined) parts.push(`${ACCESS}=${values.access}`);
  if (values.refresh !== undefined) parts.push(`${REFRESH}=${values.refresh}`);
  return { cookie: parts.join("; ") };
}

function sessionLogin(identity: { email: string; password: string }): Promise<Response> {
  return postJson("/v1/auth/session/login", { username: identity.email, password: identity.password });
}

async function signIn(identity: { email: string; password: string }): Promise<{ access: string; refresh: string }> {
  const response = await sessionLogin(identity);
  expect(response.status, await response.clone().text()).toBe(204);
  return expectSessionCookies(response);
}

const post = (path: string, headers: Record<string, string> = {}) => api(path, { method: "POST", headers });
const meWithCookie = (access: string) => api("/v1/users/me", { headers: cookie({ access }) });

describe("session login", () => {
  it("sets the access and refresh cookies on a JSON login, with an empty no-store 204", async () => {
    const user = await registerUser();
    const response = await sessionLogin(user);
    expect(response.status).toBe(204);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.text()).toBe("");
    const raw = getSetCookie(response);
    expect(raw).toHaveLength(2);
    for (const header of raw) expect(header.toLowerCase()).not.toContain("domain");
    const { access } = expectSessionCookies(response);
    expect(raw[0]).toBe(`${ACCESS}=${access}; Max-Age=900; Path=/; Secure; HttpOnly; SameSite=Lax`);
  });

  it("accepts a form-urlencoded login with the username", async () => {
    const user = await registerUser();
    const response = await api("/v1/auth/session/login", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ username: user.username, password: user.password }),
    });
    expect(response.status, await response.clone().text()).toBe(204);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const { access } = expectSessionCookies(response);
    expect((await meWithCookie(access)).status).toBe(200);
  });

  it("lets an unverified account sign in and read its account with the access cookie", async () => {
    const user = await registerUser();
    const { access } = await signIn(user);
    const response = await meWithCookie(access);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: user.id, email: user.email, is_verified: false });
  });

  it("finds the access cookie among other cookies", async () => {
    const user = await registerUser();
    const { access, refresh } = await signIn(user);
    const response = await api("/v1/users/me", {
      headers: { cookie: `theme=dark; ${REFRESH}=${refresh};${ACCESS}=${access} ; lang=en` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: user.id });
  });

  it("prefers the bearer header over the cookie when both are sent", async () => {
    const cookieUser = await registerUser();
    const bearerUser = await registerUser();
    const { access } = await signIn(cookieUser);
    const { access_token } = await bearerLogin(bearerUser);

    const both = await api("/v1/users/me", { headers: { ...bearer(access_token), ...cookie({ access }) } });
    expect(both.status).toBe(200);
    expect(await both.json()).toMatchObject({ id: bearerUser.id });

    // The header decides even when it is bad: the valid cookie does not rescue it.
    const badHeader = await api("/v1/users/me", { headers: { ...bearer(`${access_token}x`), ...cookie({ access }) } });
    await expectProblem(badHeader, 401, "INVALID_TOKEN");
  });

  it("refuses a forged access cookie with 401", async () => {
    const { access } = await signIn(await registerUser());
    await expectProblem(await meWithCookie(`${access}x`), 401, "INVALID_TOKEN");
    await expectProblem(await meWithCookie("not-a-token"), 401, "INVALID_TOKEN");
  });

  it("answers bad credentials with the bearer route's exact 400, and sets no cookie", async () => {
    const user = await registerUser();
    // Each account takes two failures here (session and bearer): within its budget of 3 a minute.
    const other = await registerUser();
    const inactive = await registerUser();
    await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(inactive.id).run();
    const attempts = [
      { username: newIdentity().email, password: user.password },
      { username: user.email, password: "wrong-password-entirely" },
      { username: other.username, password: "wrong-password-entirely" },
      { username: inactive.email, password: inactive.password },
    ];
    const snapshot = async (response: Response) => {
      const requestId = response.headers.get("x-request-id")!;
      const body = await response.clone().text();
      await expectProblem(response, 400, "LOGIN_BAD_CREDENTIALS");
      // The bookmark names the database state the request saw (the latest, on the primary), whoever asked.
      const headers = [...response.headers].filter(
        ([name]) => name !== "x-request-id" && name !== "server-timing" && name !== "x-d1-bookmark",
      );
      return { status: response.status, headers, body: body.replace(requestId, "<id>") };
    };
    for (const attempt of attempts) {
      const session = await postJson("/v1/auth/session/login", attempt);
      expect(getSetCookie(session)).toEqual([]);
      const bearerResponse = await postJson("/v1/auth/bearer/login", attempt);
      expect(await snapshot(session)).toEqual(await snapshot(bearerResponse));
    }
  });

  it("refuses an invalid body with 422 and sets no cookie", async () => {
    const unknownMember = await postJson("/v1/auth/session/login", { username: "a", password: "b", role: "lab" });
    expect(getSetCookie(unknownMember)).toEqual([]);
    await expectProblem(unknownMember, 422, "VALIDATION_FAILED");
    await expectProblem(await api("/v1/auth/session/login", { method: "POST" }), 422, "VALIDATION_FAILED");
  });
});

describe("session refresh", () => {
  it("rotates both cookies; the spent refresh cookie is refused, and a late replay ends the session and clears the cookies", async () => {
    const user = await registerUser();
    const first = await signIn(user);

    const rotated = await post("/v1/auth/session/refresh", cookie(first));
    expect(rotated.status, await rotated.clone().text()).toBe(204);
    expect(rotated.headers.get("cache-control")).toBe("no-store");
    expect(await rotated.text()).toBe("");
    const second = expectSessionCookies(rotated);
    expect(second.refresh).not.toBe(first.refresh);
    expect(second.access).not.toBe(first.access);
    const account = await meWithCookie(second.access);
    expect(account.status).toBe(200);
    expect(await account.json()).toMatchObject({ id: user.id });

    // Within seconds of the rotation a replay is most likely another tab: refused, cookies kept.
    const soon = await post("/v1/auth/session/refresh", cookie({ refresh: first.refresh }));
    await expectProblem(soon, 401, "REFRESH_TOKEN_INVALID");
    expect(getSetCookie(soon)).toEqual([]);
    // Later it ends the session, and the refusal clears the cookies.
    await env.DB.prepare("UPDATE refresh_tokens SET rotated_at = rotated_at - 60 WHERE rotated_at IS NOT NULL").run();
    const replay = await post("/v1/auth/session/refresh", cookie({ refresh: first.refresh }));
    expectClearedCookies(replay);
    await expectProblem(replay, 401, "REFRESH_TOKEN_INVALID");
    expect((await meWithCookie(second.access)).status).toBe(401);
  });

  it("needs only the refresh cookie", async () => {
    const { refresh } = await signIn(await registerUser());
    const response = await post("/v1/auth/session/refresh", cookie({ refresh }));
    expect(response.status).toBe(204);
    expectSessionCookies(response);
  });

  it.each([
    ["no cookie at all", {}],
    ["only the access cookie", { access: "eyJ.e30.sig" }],
    ["an unknown refresh cookie", { refresh: "A".repeat(43) }],
    ["an empty refresh cookie", { refresh: "" }],
  ])("answers %s with 401 and clears the cookies", async (_label, values) => {
    const headers = Object.keys(values).length === 0 ? {} : cookie(values);
    const response = await post("/v1/auth/session/refresh", headers);
    expectClearedCookies(response);
    await expectProblem(response, 401, "REFRESH_TOKEN_INVALID");
  });

  it("does not accept a bearer refresh token in the body instead of the cookie", async () => {
    const pair = await bearerLogin(await registerUser());
    const response = await postJson("/v1/auth/session/refresh", { refresh_token: pair.refresh_token });
    await expectProblem(response, 401, "REFRESH_TOKEN_INVALID");
  });
});

describe("session logout", () => {
  it("clears both cookies and the site data, and ends the session", async () => {
    const user = await registerUser();
    const session = await signIn(user);
    const other = await signIn(user);

    const response = await post("/v1/auth/session/logout", cookie(session));
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(response.headers.get("clear-site-data")).toBe(CLEAR_SITE_DATA);
    expectClearedCookies(response);

    await expectProblem(await post("/v1/auth/session/refresh", cookie({ refresh: session.refresh })), 401, "REFRESH_TOKEN_INVALID");
    await expectProblem(await meWithCookie(session.access), 401, "INVALID_TOKEN");
    // Another browser session of the same account lives on.
    expect((await meWithCookie(other.access)).status).toBe(200);
  });

  it("ends the session with only the refresh cookie (the access cookie stops working too)", async () => {
    const session = await signIn(await registerUser());
    const response = await post("/v1/auth/session/logout", cookie({ refresh: session.refresh }));
    expect(response.status).toBe(204);
    expectClearedCookies(response);
    await expectProblem(await meWithCookie(session.access), 401, "INVALID_TOKEN");
  });

  it("ends the session with only the access cookie (the refresh cookie is refused afterwards)", async () => {
    const session = await signIn(await registerUser());
    const response = await post("/v1/auth/session/logout", cookie({ access: session.access }));
    expect(response.status).toBe(204);
    expectClearedCookies(response);
    await expectProblem(await post("/v1/auth/session/refresh", cookie({ refresh: session.refresh })), 401, "REFRESH_TOKEN_INVALID");
    await expectProblem(await meWithCookie(session.access), 401, "INVALID_TOKEN");
  });

  it.each([
    ["no cookies", {}],
    ["unknown cookies", cookie({ access: "garbage", refresh: "B".repeat(43) })],
  ])("answers 204 with %s and still clears them", async (_label, headers) => {
    const response = await post("/v1/auth/session/logout", headers);
    expect(response.status).toBe(204);
    expect(response.headers.get("clear-site-data")).toBe(CLEAR_SITE_DATA);
    expectClearedCookies(response);
  });

  it("is harmless twice", async () => {
    const session = await signIn(await registerUser());
    expect((await post("/v1/auth/session/logout", cookie(session))).status).toBe(204);
    expect((await post("/v1/auth/session/logout", cookie(session))).status).toBe(204);
  });
});

describe("revoke-all with the session cookies", () => {
  it("ends every session of the account, bearer ones included, and clears this browser", async () => {
    const user = await registerUser();
    const bystander = await registerUser();
    const session = await signIn(user);
    const otherBrowser = await signIn(user);
    const app = await bearerLogin(user);
    const bystanderSession = await signIn(bystander);

    const response = await post("/v1/auth/sessions/revoke-all", cookie(session));
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(response.headers.get("clear-site-data")).toBe(CLEAR_SITE_DATA);
    expectClearedCookies(response);

    await expectProblem(await me(app.access_token), 401, "INVALID_TOKEN");
    await expectProblem(await postJson("/v1/auth/bearer/refresh", { refresh_token: app.refresh_token }), 401, "REFRESH_TOKEN_INVALID");
    for (const revoked of [session, otherBrowser]) {
      await expectProblem(await meWithCookie(revoked.access), 401, "INVALID_TOKEN");
      await expectProblem(await post("/v1/auth/session/refresh", cookie({ refresh: revoked.refresh })), 401, "REFRESH_TOKEN_INVALID");
    }
    // Other accounts are untouched, and the account can sign in again.
    expect((await meWithCookie(bystanderSession.access)).status).toBe(200);
    const fresh = await signIn(user);
    expect((await meWithCookie(fresh.access)).status).toBe(200);
  });

  it("needs a signed-in caller: the refresh cookie alone is not enough", async () => {
    const session = await signIn(await registerUser());
    await expectProblem(await post("/v1/auth/sessions/revoke-all"), 401, "AUTHENTICATION_REQUIRED");
    await expectProblem(await post("/v1/auth/sessions/revoke-all", cookie({ refresh: session.refresh })), 401, "AUTHENTICATION_REQUIRED");
    // Nothing was revoked.
    expect((await meWithCookie(session.access)).status).toBe(200);
  });
});

describe("racing tabs", () => {
  it("does not clear the cookies of the tab that lost a refresh race", async () => {
    const user = await registerUser();
    const login = await postJson("/v1/auth/session/login", { username: user.email, password: user.password });
    const refreshCookie = getSetCookie(login)
      .find((c) => c.startsWith("__Host-relab-refresh="))!
      .split(";")[0]!;
    const refresh = () => api("/v1/auth/session/refresh", { method: "POST", headers: { cookie: refreshCookie } });
    const [a, b] = await Promise.all([refresh(), refresh()]);
    const loser = a.status === 401 ? a : b;
    expect([a.status, b.status].sort()).toEqual([204, 401]);
    await expectProblem(loser, 401, "REFRESH_TOKEN_INVALID");
    expect(getSetCookie(loser)).toEqual([]);
  });
});
