import { afterEach, describe, expect, it, vi } from "vitest";
import { bearer, verifiedUser } from "../../support/accounts";
import { FAKE_GITHUB, FAKE_GOOGLE } from "../../support/fake-upstream-config";
import { api, apiWithVars, expectProblem, getSetCookie } from "../../support/http";
import {
  APP_ACCOUNT,
  APP_LOGIN,
  appPkce,
  appResult,
  appSignIn,
  associateAuthorize,
  beginSignIn,
  browserSignIn,
  consent,
  csrfCookieOf,
  followCallback,
  fragmentOf,
  NATIVE_ACCOUNT,
  NATIVE_LOGIN,
  profile,
  sessionCookiesOf,
  tokenAuthorize,
} from "../../support/oauth";

// What guards the sign-in flows (api-spec.md, Identity-provider sign-in): the exact redirect
// allow-list (the app's web pages for the browser flows, the native app's targets for the token
// flow only); the authorization URL (PKCE S256, callback, scopes, a sealed state) and the CSRF
// cookie; tampered, replayed, expired or misplaced states and missing or foreign CSRF cookies;
// denied consent, reused or substituted codes, provider outages; unconfigured providers.

/** Starts an authorization to `target`; the token flow with a well-formed app challenge, so only the target can be refused. */
const authorizeWith = async (target: string, flow: "session" | "token" = "session", provider = "google") =>
  flow === "token"
    ? tokenAuthorize(provider, target, (await appPkce()).challenge)
    : api(`/v1/oauth/${provider}/${flow}/authorize?redirect_uri=${encodeURIComponent(target)}`);

/** A consented authorization: the callback URL the provider sent the browser to, and the browser's CSRF cookie. */
async function consented(provider: "google" | "github" = "google", who = profile()) {
  const { authorizationUrl, cookie } = await beginSignIn(provider, "session");
  return { callback: await consent(authorizationUrl, who), cookie: cookie! };
}

/** The callback URL with its query changed by `edit`. */
function edited(callback: URL, edit: (query: URLSearchParams) => void): URL {
  const url = new URL(callback);
  edit(url.searchParams);
  return url;
}

function expectError(response: Response, error: string, target = APP_LOGIN): void {
  expect(response.headers.get("location")).toBe(`${target}#status=error&error=${error}`);
  expect(fragmentOf(response)).toEqual({ status: "error", error });
  expect(sessionCookiesOf(response)).toBeNull();
  expect(getSetCookie(response)).toContain("__Host-relab-oauth=; Max-Age=0; Path=/; Secure; HttpOnly; SameSite=Lax");
}

describe("the redirect allow-list", () => {
  it.each([APP_LOGIN, APP_ACCOUNT])(
    "accepts %s for the session and link flows, with the CSRF cookie; the token flow refuses it",
    async (target) => {
      for (const provider of ["google", "github"]) {
        const response = await authorizeWith(target, "session", provider);
        expect(response.status, await response.clone().text()).toBe(200);
        expect(csrfCookieOf(response)).not.toBeNull();
        expect(await response.json()).toEqual({
          authorization_url: expect.stringMatching(new RegExp(`^https://${provider}\\.oauth\\.test/`)),
        });
      }
      const user = await verifiedUser("allowweb");
      for (const provider of ["google", "github", "google-youtube"]) {
        const response = await associateAuthorize(provider, bearer(user.tokens.access_token), { current_password: user.password }, target);
        expect(response.status, await response.clone().text()).toBe(200);
        expect(csrfCookieOf(response)).not.toBeNull();
      }
      for (const provider of ["google", "github"]) {
        const response = await authorizeWith(target, "token", provider);
        await expectProblem(response, 400, "REDIRECT_URI_NOT_ALLOWED");
        expect(getSetCookie(response)).toEqual([]);
      }
    },
  );

  it.each([NATIVE_LOGIN, NATIVE_ACCOUNT])(
    "accepts %s for the token flow only, without a cookie; the session and link flows refuse it",
    async (target) => {
      for (const provider of ["google", "github"]) {
        const response = await authorizeWith(target, "token", provider);
        expect(response.status, await response.clone().text()).toBe(200);
        expect(getSetCookie(response)).toEqual([]);
        expect(await response.json()).toEqual({
          authorization_url: expect.stringMatching(new RegExp(`^https://${provider}\\.oauth\\.test/`)),
        });

        const session = await authorizeWith(target, "session", provider);
        await expectProblem(session, 400, "REDIRECT_URI_NOT_ALLOWED");
        expect(getSetCookie(session)).toEqual([]);
      }
      const user = await verifiedUser("allownative");
      for (const provider of ["google", "github", "google-youtube"]) {
        const response = await associateAuthorize(provider, bearer(user.tokens.access_token), { current_password: user.password }, target);
        await expectProblem(response, 400, "REDIRECT_URI_NOT_ALLOWED");
        expect(getSetCookie(response)).toEqual([]);
      }
    },
  );

  it("sends the result to the target given", async () => {
    expect((await browserSignIn("github", profile(), APP_ACCOUNT)).headers.get("location")).toBe(`${APP_ACCOUNT}#status=success`);
    const { response } = await appSignIn("github", profile(), NATIVE_ACCOUNT);
    appResult(response, "success", "login_handoff", NATIVE_ACCOUNT);
  });

  it.each([
    ["another host", "http://evil.example:8081/login"],
    ["another port", "http://localhost:8082/login"],
    ["no port", "http://localhost/login"],
    ["https instead of http", "https://localhost:8081/login"],
    ["a query", "http://localhost:8081/login?next=/admin"],
    ["an empty query", "http://localhost:8081/login?"],
    ["a fragment", "http://localhost:8081/login#x"],
    ["an empty fragment", "http://localhost:8081/login#"],
    ["credentials", "http://u:p@localhost:8081/login"],
    ["the host as a user name", "http://localhost:8081@evil.example/login"],
    ["a trailing slash", "http://localhost:8081/login/"],
    ["a longer path", "http://localhost:8081/login/extra"],
    ["the app's root", "http://localhost:8081/"],
    ["another path's case", "http://localhost:8081/LOGIN"],
    ["another native target", "relab://other"],
    ["a native target with a path", "relab://login/extra"],
    ["a native target with a trailing slash", "relab://login/"],
    ["another app's scheme", "otherapp://login"],
    ["javascript:", "javascript:alert(1)"],
    ["a relative path", "/login"],
    ["a protocol-relative URL", "//localhost:8081/login"],
    ["an unparsable value", "http://[not a url"],
  ])("refuses %s (%s) with 400 REDIRECT_URI_NOT_ALLOWED, in both flows and for both providers", async (_name, target) => {
    for (const [flow, provider] of [
      ["session", "google"],
      ["token", "google"],
      ["session", "github"],
    ] as const) {
      const response = await authorizeWith(target, flow, provider);
      await expectProblem(response, 400, "REDIRECT_URI_NOT_ALLOWED");
      expect(getSetCookie(response)).toEqual([]);
    }
  });
});

describe("the authorization URL", () => {
  it.each([
    ["google", FAKE_GOOGLE.authorizeUrl, FAKE_GOOGLE.clientId, "openid email profile"],
    ["github", FAKE_GITHUB.authorizeUrl, FAKE_GITHUB.clientId, "read:user user:email"],
  ] as const)(
    "for %s carries PKCE S256, the callback, the scopes and a sealed state; the CSRF cookie is set",
    async (provider, endpoint, clientId, scope) => {
      const response = await authorizeWith(APP_LOGIN, "session", provider);
      expect(response.headers.get("cache-control")).toBe("no-store");
      const url = new URL(((await response.json()) as { authorization_url: string }).authorization_url);
      expect(`${url.origin}${url.pathname}`).toBe(endpoint);
      const query = Object.fromEntries(url.searchParams);
      expect(query).toEqual({
        client_id: clientId,
        redirect_uri: `http://localhost/v1/oauth/${provider}/session/callback`,
        response_type: "code",
        scope,
        state: expect.stringMatching(/^v2\.0\.[\w-]+\.[\w-]{100,}$/),
        code_challenge: expect.stringMatching(/^[\w-]{43}$/),
        code_challenge_method: "S256",
      });
      // The state is encrypted: none of what it carries (the verifier, the target, the flow) can be read in it.
      const [, iv, body] = query.state!.split(".") as [string, string, string];
      const bytes = atob(
        `${iv}${body}`
          .replace(/-/g, "+")
          .replace(/_/g, "/")
          .slice(0, Math.floor(`${iv}${body}`.length / 4) * 4),
      );
      for (const plain of ["verifier", "localhost:8081", "session", provider]) expect(bytes).not.toContain(plain);

      const cookies = getSetCookie(response);
      expect(cookies).toHaveLength(1);
      expect(cookies[0]).toMatch(/^__Host-relab-oauth=[\w-]{20,}; Max-Age=600; Path=\/; Secure; HttpOnly; SameSite=Lax$/);
      const csrf = cookies[0]!.split(";")[0]!.split("=")[1]!;
      expect(url.toString()).not.toContain(csrf);

      // Every authorization has its own state and challenge.
      const again = new URL(
        ((await (await authorizeWith(APP_LOGIN, "session", provider)).json()) as { authorization_url: string }).authorization_url,
      );
      expect(again.searchParams.get("state")).not.toBe(query.state);
      expect(again.searchParams.get("code_challenge")).not.toBe(query.code_challenge);
    },
  );
});

describe("the state and the CSRF cookie", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a callback without the CSRF cookie ends in invalid_state", async () => {
    const { callback } = await consented();
    expectError(await followCallback(callback, null), "invalid_state");
  });

  it("a callback with another authorization's CSRF cookie, or a made-up one, ends in invalid_state", async () => {
    const victim = await consented();
    const attacker = await beginSignIn("google", "session");
    expectError(await followCallback(victim.callback, attacker.cookie), "invalid_state");
    expectError(await followCallback(victim.callback, "__Host-relab-oauth=made-up-value"), "invalid_state");
  });

  it.each([APP_LOGIN, APP_ACCOUNT])(
    "every browser flow (here to %s) is bound by the CSRF cookie: without it, invalid_state",
    async (target) => {
      for (const provider of ["google", "github"] as const) {
        const { authorizationUrl, cookie } = await beginSignIn(provider, "session", target);
        expect(cookie).not.toBeNull();
        const callback = await consent(authorizationUrl, profile());
        expectError(await followCallback(callback, null), "invalid_state", target);
      }
    },
  );

  it("a replayed callback ends in invalid_state", async () => {
    const { callback, cookie } = await consented();
    expect(fragmentOf(await followCallback(callback, cookie))).toEqual({ status: "success" });
    expectError(await followCallback(callback, cookie), "invalid_state");
  });

  it("an altered, truncated, foreign or missing state is 400 OAUTH_STATE_INVALID", async () => {
    const { callback, cookie } = await consented();
    const state = callback.searchParams.get("state")!;
    const at = Math.floor(state.length / 2);
    const flipped = `${state.slice(0, at)}${state[at] === "A" ? "B" : "A"}${state.slice(at + 1)}`;
    for (const value of [flipped, state.slice(0, -4), `v9${state.slice(2)}`, "v1.abc.def", "not-a-state", ""]) {
      await expectProblem(
        await followCallback(
          edited(callback, (q) => q.set("state", value)),
          cookie,
        ),
        400,
        "OAUTH_STATE_INVALID",
      );
    }
    await expectProblem(
      await followCallback(
        edited(callback, (q) => q.delete("state")),
        cookie,
      ),
      400,
      "OAUTH_STATE_INVALID",
    );
    // None of that spent the real state.
    expect(fragmentOf(await followCallback(callback, cookie))).toEqual({ status: "success" });
  });

  it("a state is good only for its provider's callback and its flow's", async () => {
    const google = await consented("google");
    for (const path of [
      "/v1/oauth/github/session/callback",
      "/v1/oauth/google/token/callback",
      "/v1/oauth/google/associate/callback",
      "/v1/oauth/google-youtube/associate/callback",
    ]) {
      await expectProblem(await followCallback(google.callback, google.cookie, path), 400, "OAUTH_STATE_INVALID");
    }
    const github = await consented("github");
    await expectProblem(
      await followCallback(github.callback, github.cookie, "/v1/oauth/google/session/callback"),
      400,
      "OAUTH_STATE_INVALID",
    );
    // A token-flow state on the session callback.
    const app = await beginSignIn("google", "token");
    const appCallback = await consent(app.authorizationUrl, profile());
    await expectProblem(await followCallback(appCallback, google.cookie, "/v1/oauth/google/session/callback"), 400, "OAUTH_STATE_INVALID");
  });

  it("a state lives 10 minutes", async () => {
    const late = await consented();
    const inTime = await consented();
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 601_000 });
    await expectProblem(await followCallback(late.callback, late.cookie), 400, "OAUTH_STATE_INVALID");
    vi.setSystemTime(Date.now() - 20_000);
    expect(fragmentOf(await followCallback(inTime.callback, inTime.cookie))).toEqual({ status: "success" });
  });
});

describe("the provider's answer", () => {
  it("denied consent ends in access_denied", async () => {
    const { callback, cookie } = await consented("google", profile({ deny: true }));
    expect(callback.searchParams.get("error")).toBe("access_denied");
    expectError(await followCallback(callback, cookie), "access_denied");
  });

  it("another provider error ends in provider_error; neither code nor error in invalid_request", async () => {
    const first = await consented();
    const failed = edited(first.callback, (q) => {
      q.delete("code");
      q.set("error", "server_error");
    });
    expectError(await followCallback(failed, first.cookie), "provider_error");
    const second = await consented();
    expectError(
      await followCallback(
        edited(second.callback, (q) => q.delete("code")),
        second.cookie,
      ),
      "invalid_request",
    );
  });

  it.each(["google", "github"] as const)(
    "%s: a code already redeemed is refused in another authorization: provider_error",
    async (provider) => {
      const first = await consented(provider);
      expect(fragmentOf(await followCallback(first.callback, first.cookie))).toEqual({ status: "success" });
      const second = await consented(provider);
      const replayed = edited(second.callback, (q) => q.set("code", first.callback.searchParams.get("code")!));
      expectError(await followCallback(replayed, second.cookie), "provider_error");
    },
  );

  it.each(["google", "github"] as const)(
    "%s: a code issued to another authorization fails its PKCE check: provider_error",
    async (provider) => {
      const stolen = await consented(provider);
      const own = await consented(provider);
      const swapped = edited(own.callback, (q) => q.set("code", stolen.callback.searchParams.get("code")!));
      expectError(await followCallback(swapped, own.cookie), "provider_error");
    },
  );

  it.each([
    ["google", "token"],
    ["google", "userinfo"],
    ["github", "token"],
    ["github", "userinfo"],
  ] as const)("%s with its %s endpoint down ends in provider_unavailable", async (provider, down) => {
    const { callback, cookie } = await consented(provider, profile({ down }));
    expectError(await followCallback(callback, cookie), "provider_unavailable");
  });
});

describe("providers and flows that are not there", () => {
  it.each([
    ["github", { OAUTH_GITHUB_CLIENT_ID: "" }],
    ["google", { OAUTH_GOOGLE_CLIENT_SECRET: "" }],
  ] as const)("%s without a client is 404 OAUTH_PROVIDER_NOT_CONFIGURED", async (provider, vars) => {
    const target = encodeURIComponent(APP_LOGIN);
    const native = new URLSearchParams({ redirect_uri: NATIVE_LOGIN, code_challenge: (await appPkce()).challenge });
    for (const path of [
      `/v1/oauth/${provider}/session/authorize?redirect_uri=${target}`,
      `/v1/oauth/${provider}/token/authorize?${native.toString()}`,
    ]) {
      await expectProblem(await apiWithVars(vars, path), 404, "OAUTH_PROVIDER_NOT_CONFIGURED");
    }
    await expectProblem(
      await apiWithVars(vars, `/v1/oauth/${provider}/session/callback?code=x&state=y`),
      404,
      "OAUTH_PROVIDER_NOT_CONFIGURED",
    );
    // The other provider is unaffected.
    const other = provider === "github" ? "google" : "github";
    expect((await apiWithVars(vars, `/v1/oauth/${other}/session/authorize?redirect_uri=${target}`)).status).toBe(200);
  });

  it("google-youtube has no sign-in flows: 422 on the session and token routes", async () => {
    const target = encodeURIComponent(APP_LOGIN);
    for (const flow of ["session", "token"]) {
      await expectProblem(await api(`/v1/oauth/google-youtube/${flow}/authorize?redirect_uri=${target}`), 422, "VALIDATION_FAILED");
      await expectProblem(await api(`/v1/oauth/google-youtube/${flow}/callback?code=x&state=y`), 422, "VALIDATION_FAILED");
    }
  });
});
