// Scenarios measured against the app worker. Add one by appending to the list:
//
//   {
//     name: "unique-name",          // used in the table, the JSON and `--only`
//     method: "GET",                // any HTTP method
//     path: "/v1/...",              // path and query string
//     headers: { ... },             // optional request headers
//     body: "..." | object,         // optional; an object is sent as JSON
//     expectStatus: 400,            // optional: the one status every response must have (default: any 2xx)
//     seed: async (ctx) => {...},   // optional, see below
//   }
//
// `seed(ctx)` runs once after the migrations and the bootstrap warm-up request, before any load,
// only when its scenario is selected. ctx = { db, fetch, url, bootstrap }:
//   db        - the app's D1 database (mf.getD1Database("DB")); use db.prepare(...).run() / db.batch()
//   fetch     - (path, init?) => Promise<Response> against the app worker (for API-driven setup)
//   url       - the app's base URL
//   bootstrap - { email, password } of the bootstrap superuser
// A seed may return { path?, headers?, body? } to override the scenario's request, e.g. the id
// of a row it created or an Authorization header it obtained by logging in.
// Every response of a scenario must be a 2xx, or exactly `expectStatus` when it is set (a scenario
// that measures an error path); anything else flags the scenario as failed. A seed that sets up
// an error path should also check, once, that the error is the intended one (its body's code):
// under load only the status is checked.

/** The account the login scenarios sign in to; the password obeys the registration rules. */
export const LOGIN_ACCOUNT = { email: "bench.login@example.org", username: "bench_login", password: "violet-kettle-47-orbit" };

// One registration per app instance, shared by the login scenarios' seeds (whichever runs first).
const registrations = new Map();

/**
 * Registers LOGIN_ACCOUNT through the real API (POST /v1/auth/register: policy checks, Argon2id
 * hash, INSERT, verification email to the dev outbox). Its breached-password check calls
 * api.pwnedpasswords.com, which fails open after its timeout when unreachable: ~1.5 s here.
 */
function registerLoginAccount({ fetch, url }) {
  if (!registrations.has(url)) {
    registrations.set(url, (async () => {
      const response = await fetch("/v1/auth/register", {
        method: "POST",
        headers: { "content-type": "application/json", "cf-connecting-ip": "127.0.0.1" },
        body: JSON.stringify(LOGIN_ACCOUNT),
      });
      const text = await response.text();
      if (response.status !== 201) throw new Error(`seed: POST /v1/auth/register answered ${response.status}: ${text.slice(0, 300)}`);
    })());
  }
  return registrations.get(url);
}

/** Seeds a failed-login scenario: checks once that the request is refused as LOGIN_BAD_CREDENTIALS, not for some other reason. */
async function expectBadCredentials({ fetch }, body) {
  const response = await fetch("/v1/auth/bearer/login", {
    method: "POST",
    headers: { "content-type": "application/json", "cf-connecting-ip": "127.0.0.1" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 400 || !text.includes('"LOGIN_BAD_CREDENTIALS"')) {
    throw new Error(`seed: a failed login answered ${response.status}, expected 400 LOGIN_BAD_CREDENTIALS: ${text.slice(0, 300)}`);
  }
}

export const scenarios = [
  { name: "live", method: "GET", path: "/live" },
  { name: "units", method: "GET", path: "/v1/units" },
  // A successful bearer login: 1 D1 round trip to find the account, one Argon2id verification
  // (m=19456 KiB, t=2, p=1, wrangler.toml), 1 batch to store the refresh token. Every response
  // issues a new session (a refresh_tokens row), as real logins do.
  {
    name: "login",
    method: "POST",
    path: "/v1/auth/bearer/login",
    body: { username: LOGIN_ACCOUNT.email, password: LOGIN_ACCOUNT.password },
    seed: async (ctx) => {
      await registerLoginAccount(ctx);
    },
  },
  // The existing account, wrong password: one lookup, one Argon2id verification, 400.
  {
    name: "login-wrong-password",
    method: "POST",
    path: "/v1/auth/bearer/login",
    body: { username: LOGIN_ACCOUNT.email, password: "wrong-kettle-47-orbit" },
    expectStatus: 400,
    seed: async (ctx) => {
      await registerLoginAccount(ctx);
      await expectBadCredentials(ctx, { username: LOGIN_ACCOUNT.email, password: "wrong-kettle-47-orbit" });
    },
  },
  // No such account: one lookup, one Argon2id verification against a dummy hash, the same 400.
  // Next to login-wrong-password it shows whether timing tells which emails have an account.
  {
    name: "login-unknown",
    method: "POST",
    path: "/v1/auth/bearer/login",
    body: { username: "nobody.here@example.org", password: LOGIN_ACCOUNT.password },
    expectStatus: 400,
    seed: async (ctx) => {
      await expectBadCredentials(ctx, { username: "nobody.here@example.org", password: LOGIN_ACCOUNT.password });
    },
  },
];
