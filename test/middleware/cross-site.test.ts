import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, bearerLogin, newIdentity, postJson, registerUser } from "../support/accounts";
import { api, expectProblem, getSetCookie, ORIGIN } from "../support/http";

const ACCESS = "__Host-relab-auth";
const REFRESH = "__Host-relab-refresh";
const EVIL = "https://evil.example";

type HeaderMap = Record<string, string>;

/** Header sets by which a browser marks a request as coming from a foreign site. */
const FOREIGN: [string, HeaderMap][] = [
  ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site" }],
  ["a foreign Origin", { origin: EVIL }],
  ["Origin: null", { origin: "null" }],
  ["a look-alike of the app origin", { origin: "http://localhost:8081.evil.example" }],
  ["the app host on an unlisted port", { origin: "http://localhost:9999" }],
  ["the app origin over https", { origin: "https://localhost:8081" }],
  ["the API's host over https", { origin: "https://localhost" }],
  ["an allowed Origin with Sec-Fetch-Site: cross-site", { origin: env.APP_ORIGIN, "sec-fetch-site": "cross-site" }],
  ["Sec-Fetch-Site: same-site with a foreign Origin", { origin: EVIL, "sec-fetch-site": "same-site" }],
  ["Sec-Fetch-Site: same-origin with Origin: null", { origin: "null", "sec-fetch-site": "same-origin" }],
  ["Sec-Fetch-Site: none with a foreign Origin", { origin: EVIL, "sec-fetch-site": "none" }],
  ["both cross-site markers", { origin: EVIL, "sec-fetch-site": "cross-site" }],
];

/** One of each marker, for the tables that multiply them with something else. */
const MARKERS: [string, HeaderMap][] = [
  ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site" }],
  ["an Origin outside the allow-list", { origin: EVIL }],
];

/** Header sets that pass: same-site fetch metadata, an allowed Origin, the API's own, or neither header. */
const ALLOWED: [string, HeaderMap][] = [
  ["neither header", {}],
  ["Sec-Fetch-Site: same-origin", { "sec-fetch-site": "same-origin" }],
  ["Sec-Fetch-Site: same-site", { "sec-fetch-site": "same-site" }],
  ["Sec-Fetch-Site: none", { "sec-fetch-site": "none" }],
  ["the app origin", { origin: env.APP_ORIGIN }],
  ["the site origin", { origin: env.SITE_ORIGIN }],
  ["the docs origin", { origin: env.DOCS_ORIGIN }],
  ["the API's own origin", { origin: ORIGIN }],
  ["the app origin, same-site", { origin: env.APP_ORIGIN, "sec-fetch-site": "same-site" }],
  ["the API's own origin, same-origin", { origin: ORIGIN, "sec-fetch-site": "same-origin" }],
];

interface Session {
  access: string;
  refresh: string;
}

const cookieHeader = (session: Partial<Session>): string =>
  [
    session.access === undefined ? null : `${ACCESS}=${session.access}`,
    session.refresh === undefined ? null : `${REFRESH}=${session.refresh}`,
  ]
    .filter((part) => part !== null)
    .join("; ");

function cookiesOf(response: Response): Session {
  const values = new Map(
    getSetCookie(response).map((header) => {
      const pair = header.split(";")[0]!;
      const eq = pair.indexOf("=");
      return [pair.slice(0, eq), pair.slice(eq + 1)] as const;
    }),
  );
  return { access: values.get(ACCESS)!, refresh: values.get(REFRESH)! };
}

function sessionLogin(identity: { email: string; password: string }, headers: HeaderMap = {}): Promise<Response> {
  return postJson("/v1/auth/session/login", { username: identity.email, password: identity.password }, headers);
}

/** A new account signed in with the session cookies (no cross-site headers). */
async function cookieUser() {
  const user = await registerUser();
  const response = await sessionLogin(user);
  expect(response.status, await response.clone().text()).toBe(204);
  return { ...user, session: cookiesOf(response) };
}

const patchMe = (body: unknown, headers: HeaderMap) =>
  api("/v1/users/me", { method: "PATCH", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

const toCommunity = { preferences: { profile_visibility: "community" } };

async function visibility(session: Session): Promise<string> {
  const response = await api("/v1/users/me", { headers: { cookie: cookieHeader(session) } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { preferences: { profile_visibility: string } }).preferences.profile_visibility;
}

async function sessionRows(userId: number): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM refresh_tokens WHERE user_id = ?").bind(userId).first<{ n: number }>();
  return row!.n;
}

async function expectRefused(response: Response): Promise<void> {
  expect(getSetCookie(response)).toEqual([]);
  await expectProblem(response, 403, "CROSS_SITE_REQUEST_REFUSED");
}

describe("cross-site protection of cookie-carrying writes", () => {
  it.each(FOREIGN)("refuses PATCH /v1/users/me with the cookies and %s, changing nothing", async (_label, headers) => {
    const user = await cookieUser();
    await expectRefused(await patchMe(toCommunity, { cookie: cookieHeader(user.session), ...headers }));
    expect(await visibility(user.session)).toBe("public");
  });

  it.each(ALLOWED)("lets PATCH /v1/users/me with the cookies and %s through", async (_label, headers) => {
    const user = await cookieUser();
    const response = await patchMe(toCommunity, { cookie: cookieHeader(user.session), ...headers });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await visibility(user.session)).toBe("community");
  });

  const requests: [method: string, path: string][] = [
    ["POST", "/v1/auth/session/refresh"],
    ["POST", "/v1/auth/session/logout"],
    ["POST", "/v1/auth/sessions/revoke-all"],
    ["POST", "/v1/auth/bearer/logout"],
    ["POST", "/v1/auth/register"],
    ["PATCH", "/v1/users/me"],
    ["PUT", "/v1/users/me"],
    ["DELETE", "/v1/users/me"],
    ["DELETE", "/v1/no-such-route"],
  ];
  it.each(requests.flatMap(([method, path]) => MARKERS.map(([label, headers]) => [method, path, label, headers] as const)))(
    "refuses %s %s with the cookies and %s, and the session survives",
    async (method, path, _label, headers) => {
      const user = await cookieUser();
      const response = await api(path, {
        method,
        headers: { "content-type": "application/json", cookie: cookieHeader(user.session), ...headers },
        body: "{}",
      });
      await expectRefused(response);
      // Neither logged out, nor revoked, nor rotated.
      expect(await visibility(user.session)).toBe("public");
      const rotate = await api("/v1/auth/session/refresh", { method: "POST", headers: { cookie: cookieHeader(user.session) } });
      expect(rotate.status).toBe(204);
    },
  );

  it.each<[string, (session: Session) => string]>([
    ["only the access cookie", (s) => cookieHeader({ access: s.access })],
    ["only the refresh cookie", (s) => cookieHeader({ refresh: s.refresh })],
    ["both cookies among others", (s) => `theme=dark; ${cookieHeader(s)}; lang=en`],
    ["a stale access cookie", () => `${ACCESS}=not-a-token`],
    ["a stale refresh cookie", () => `${REFRESH}=${"A".repeat(43)}`],
  ])("refuses a cross-site write carrying %s", async (_label, header) => {
    const user = await cookieUser();
    const response = await api("/v1/auth/session/logout", {
      method: "POST",
      headers: { cookie: header(user.session), "sec-fetch-site": "cross-site", origin: EVIL },
    });
    await expectRefused(response);
    expect(response.headers.get("clear-site-data")).toBeNull();
  });

  it.each(["GET", "HEAD"])("does not apply to %s, even cross-site with the cookies", async (method) => {
    const user = await cookieUser();
    const response = await api("/v1/users/me", {
      method,
      headers: { cookie: cookieHeader(user.session), "sec-fetch-site": "cross-site", origin: EVIL },
    });
    expect(response.status).toBe(200);
  });

  it("does not apply to a cookie that only resembles a session cookie", async () => {
    const { access_token } = await bearerLogin(await registerUser());
    const response = await patchMe(toCommunity, {
      ...bearer(access_token),
      cookie: "relab-auth=x; __Host-relab-authx=y; session=z",
      "sec-fetch-site": "cross-site",
      origin: EVIL,
    });
    expect(response.status, await response.clone().text()).toBe(200);
  });
});

describe("cross-site protection of the session login", () => {
  it.each(FOREIGN)("refuses a session login with %s, without starting a session", async (_label, headers) => {
    const user = await registerUser();
    await expectRefused(await sessionLogin(user, headers));
    expect(await sessionRows(user.id)).toBe(0);
  });

  it.each(ALLOWED)("lets a session login with %s through", async (_label, headers) => {
    const user = await registerUser();
    const response = await sessionLogin(user, headers);
    expect(response.status, await response.clone().text()).toBe(204);
    expect(getSetCookie(response)).toHaveLength(2);
  });

  it("refuses a cross-site form login too", async () => {
    const user = await registerUser();
    const response = await api("/v1/auth/session/login", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: EVIL },
      body: new URLSearchParams({ username: user.username, password: user.password }),
    });
    await expectRefused(response);
  });

  it("refuses wrong credentials cross-site with 403, not the 400 of a bad login", async () => {
    const user = await registerUser();
    const response = await sessionLogin({ email: user.email, password: "wrong-password-entirely" }, { "sec-fetch-site": "cross-site" });
    await expectRefused(response);
  });

  const badBodies: [string, RequestInit][] = [
    ["no body", {}],
    ["malformed JSON", { headers: { "content-type": "application/json" }, body: "{not json" }],
    [
      "an unknown member",
      { headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "a", password: "b", role: "lab" }) },
    ],
    ["a missing password", { headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "a" }) }],
    ["an unsupported content type", { headers: { "content-type": "text/plain" }, body: "username=a&password=b" }],
    [
      "an oversized body",
      { headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "a", password: "x".repeat(1_100_000) }) },
    ],
  ];
  it.each(badBodies.flatMap(([label, init]) => MARKERS.map(([marker, headers]) => [label, marker, init, headers] as const)))(
    "checks before reading the body: %s with %s gets 403",
    async (_label, _marker, init, headers) => {
      const response = await api("/v1/auth/session/login", {
        ...init,
        method: "POST",
        headers: { ...(init.headers as HeaderMap | undefined), ...headers },
      });
      await expectRefused(response);
    },
  );

  it("still answers 422 to an invalid body from an allowed origin (the check is not a blanket 403)", async () => {
    const response = await postJson("/v1/auth/session/login", { username: "a" }, { origin: env.APP_ORIGIN });
    await expectProblem(response, 422, "VALIDATION_FAILED");
  });

  it.each([
    ["a query string", "/v1/auth/session/login?next=%2F"],
    ["a percent-encoded letter", "/v1/auth/session/%6Cogin"],
    ["a trailing slash", "/v1/auth/session/login/"],
    ["an upper-case segment", "/v1/auth/session/LOGIN"],
    ["a doubled slash", "/v1//auth/session/login"],
  ])("cannot be dodged with %s in the path", async (_label, path) => {
    const user = await registerUser();
    const response = await postJson(
      path,
      { username: user.email, password: user.password },
      { "sec-fetch-site": "cross-site", origin: EVIL },
    );
    expect(getSetCookie(response)).toEqual([]);
    expect([403, 404]).toContain(response.status);
    expect(await sessionRows(user.id)).toBe(0);
  });
});

describe("requests without the session cookies are not checked", () => {
  it("lets a bearer PATCH /v1/users/me through cross-site", async () => {
    const user = await registerUser();
    const { access_token } = await bearerLogin(user);
    const response = await patchMe(toCommunity, { ...bearer(access_token), "sec-fetch-site": "cross-site", origin: EVIL });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toMatchObject({ id: user.id, preferences: { profile_visibility: "community" } });
  });

  const bearerMarkers: [string, HeaderMap][] = [
    ...MARKERS,
    ["Origin: null", { origin: "null" }],
    ["both markers", { origin: EVIL, "sec-fetch-site": "cross-site" }],
  ];
  it.each(bearerMarkers)("lets bearer login, refresh, logout and revoke-all through with %s", async (_label, headers) => {
    const user = await registerUser();
    const login = await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password }, headers);
    expect(login.status, await login.clone().text()).toBe(200);
    const pair = (await login.json()) as { access_token: string; refresh_token: string };

    const refreshed = await postJson("/v1/auth/bearer/refresh", { refresh_token: pair.refresh_token }, headers);
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as { access_token: string; refresh_token: string };

    expect((await postJson("/v1/auth/bearer/logout", { refresh_token: next.refresh_token }, headers)).status).toBe(204);
    const other = await bearerLogin(user);
    const revoke = await api("/v1/auth/sessions/revoke-all", { method: "POST", headers: { ...bearer(other.access_token), ...headers } });
    expect(revoke.status).toBe(204);
  });

  it("lets a cookie-less registration through cross-site", async () => {
    const response = await postJson("/v1/auth/register", newIdentity(), { "sec-fetch-site": "cross-site", origin: EVIL });
    expect(response.status, await response.clone().text()).toBe(201);
  });

  it("still refuses a bearer request that also carries the session cookies", async () => {
    const user = await cookieUser();
    const { access_token } = await bearerLogin(user);
    const response = await patchMe(toCommunity, {
      ...bearer(access_token),
      cookie: cookieHeader(user.session),
      "sec-fetch-site": "cross-site",
    });
    await expectRefused(response);
    expect(await visibility(user.session)).toBe("public");
  });
});
