// Scenarios measured against the app worker. Add one by appending to the list:
//
//   {
//     name: "unique-name",          // used in the table, the JSON and `--only`
//     method: "GET",                // any HTTP method
//     path: "/v1/...",              // path and query string
//     headers: { ... },             // optional request headers
//     body: "..." | object,         // optional; an object is sent as JSON
//     expectStatus: 400,            // optional: the one status every response must have (default: any 2xx)
//     vary: (i) => ({ headers?, body? }), // optional: what request i changes (e.g. a different account per request)
//     instance: "no-limits",        // optional: which app instance serves it (default "app"), see INSTANCES in run.mjs
//     addresses: NEW_CLIENT_POOL,   // optional: its own client-address pool (a size from 10.0.0.0, or { first, size, unique }); default --addresses
//     seed: async (ctx) => {...},   // optional, see below
//   }
//
// Every request to the app comes from a client address of a pool (load.mjs), as `CF-Connecting-IP`
// from Cloudflare's edge: the per-IP rate limits then see many clients at a bounded rate each, as
// real traffic looks, not one client at hundreds per second (which they would refuse with 429).
// By default the pool is `--addresses` (256: 10.0.0.0–10.0.0.255, round robin), "steady clients"
// the limiter already knows; a scenario's `addresses` replaces it (NEW_CLIENT_POOL: a never-seen
// address per request, 10.1.0.0 up). `vary(i)` is applied on top, with the same i; i counts the
// scenario's requests over all its runs (warm-up and rounds), from 0.
//
// `seed(ctx)` runs once after the migrations and the bootstrap warm-up request, before any load,
// only when its scenario is selected. ctx = { db, fetch, url, bootstrap }:
//   db        - the app's D1 database (mf.getD1Database("DB")); use db.prepare(...).run() / db.batch()
//   fetch     - (path, init?) => Promise<Response> against the app worker (for API-driven setup)
//   url       - the app's base URL
//   bootstrap - { email, password } of the bootstrap superuser
// A seed may return { path?, headers?, body?, vary? } to override the scenario's request, e.g. the
// id of a row it created or an Authorization header it obtained by logging in. It runs against the
// scenario's own instance (ctx.db and ctx.fetch are that instance's).
// Every response of a scenario must be a 2xx, or exactly `expectStatus` when it is set (a scenario
// that measures an error path); anything else flags the scenario as failed. A seed that sets up
// an error path should also check, once, that the error is the intended one (its body's code):
// under load only the status is checked.

import { NEW_CLIENT_POOL } from "./load.mjs";

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

/**
 * Accounts that are copies of LOGIN_ACCOUNT (same password hash, so the same password signs in),
 * for the login scenarios: the failed-login budget allows 3 attempts in flight or failed per
 * account per minute (always on, even with RATE_LIMITS_ENABLED=false), so one account can neither
 * take a wrong password at tens per second nor 10 concurrent logins. Pool account n is
 * `bench.pool.<n>@example.org`; `login` and `login-wrong-password` both go round it.
 *
 * Size: account n is used by requests n, n + N, n + 2N, ... (round robin over the pool), so its
 * 4th failure comes 3N requests after its 1st; at R failed logins per second, sustained, that is
 * 3N / R seconds. It stays out of a 60 s window while 3N / R >= 60, i.e. R <= N / 20: with
 * N = 2048 up to ~100 failed logins/s, against ~25/s measured here (bench/README.md). And the
 * scenario only runs 5 s of every ~50 s round: a default run (1 s warm-up + 3 × 5 s) sends ~430
 * requests, so no account is used twice at all.
 */
export const ACCOUNT_POOL = 2048;
export const poolEmail = (n) => `bench.pool.${n}@example.org`;

const pools = new Map();

/**
 * Inserts ACCOUNT_POOL copies of the registered LOGIN_ACCOUNT row in one statement: a recursive
 * CTE yields n = 0..N-1, each row gets its own email, email_canonical and username (the three
 * unique indexes of users, migrations/0000_init.sql) and every other column but the id from the
 * registered row (columns read from the table, so later migrations are copied too).
 */
function seedAccountPool(ctx) {
  if (!pools.has(ctx.url)) {
    pools.set(ctx.url, (async () => {
      await registerLoginAccount(ctx);
      const { results } = await ctx.db.prepare("SELECT name FROM pragma_table_info('users')").all();
      const copied = results.map((r) => r.name).filter((c) => !["id", "email", "email_canonical", "username"].includes(c));
      const cols = copied.map((c) => `"${c}"`).join(", ");
      const result = await ctx.db.prepare(
        `WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n + 1 < ?1)
         INSERT INTO users (email, email_canonical, username, ${cols})
         SELECT 'bench.pool.' || seq.n || '@example.org', 'bench.pool.' || seq.n || '@example.org', 'bench_pool_' || seq.n, ${copied.map((c) => `u."${c}"`).join(", ")}
         FROM seq, users AS u WHERE u.email_canonical = ?2`,
      ).bind(ACCOUNT_POOL, LOGIN_ACCOUNT.email).run();
      if (result.meta.changes !== ACCOUNT_POOL) throw new Error(`seed: account pool inserted ${result.meta.changes} rows, expected ${ACCOUNT_POOL}`);
    })());
  }
  return pools.get(ctx.url);
}

/** Unknown emails for login-unknown: a new one per request, so no budget is hit twice. */
const UNKNOWN_EMAILS = 1_000_000;

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

const WRONG_PASSWORD = "wrong-kettle-47-orbit";

export const scenarios = [
  { name: "live", method: "GET", path: "/live" },
  // A one-query read with the request-rate limiters on (wrangler.toml: RATE_LIMITS_ENABLED=true):
  // the read-ip counter of the client's address, one counter-store call.
  { name: "units", method: "GET", path: "/v1/units" },
  // The same read on a second app instance (same bundle) with RATE_LIMITS_ENABLED=false: next to
  // `units`, what the limiter costs a read (bench/README.md, The limiter).
  { name: "units-no-limits", method: "GET", path: "/v1/units", instance: "no-limits" },
  // The same read with limits on, every request from an address never seen before (10.1.0.0 up,
  // 16.7 M addresses, none repeated within a run: the target fails if one is): each read creates
  // its address's counter object. The cold-start worst case, next to `units` (steady clients).
  { name: "units-new-clients", method: "GET", path: "/v1/units", addresses: NEW_CLIENT_POOL },
  // A successful bearer login: 1 D1 round trip to find the account, one Argon2id verification
  // (m=19456 KiB, t=2, p=1, wrangler.toml), 1 batch to store the refresh token. Every response
  // issues a new session (a refresh_tokens row), as real logins do. Over the account pool too:
  // a login takes a unit of its account's failed-login budget (3) before the hash and gives it
  // back only after, so one account with 10 logins in flight has its budget spent by the ones
  // still hashing and answers 429. The login-ip limit (60/min per address) is spread by the rotation.
  {
    name: "login",
    method: "POST",
    path: "/v1/auth/bearer/login",
    body: { username: poolEmail(0), password: LOGIN_ACCOUNT.password },
    vary: (i) => ({ body: { username: poolEmail(i % ACCOUNT_POOL), password: LOGIN_ACCOUNT.password } }),
    seed: async (ctx) => {
      await seedAccountPool(ctx);
    },
  },
  // An existing account, wrong password: one lookup, one Argon2id verification, 400. Each request
  // takes the next account of the pool (see ACCOUNT_POOL for its size).
  {
    name: "login-wrong-password",
    method: "POST",
    path: "/v1/auth/bearer/login",
    body: { username: poolEmail(0), password: WRONG_PASSWORD },
    vary: (i) => ({ body: { username: poolEmail(i % ACCOUNT_POOL), password: WRONG_PASSWORD } }),
    expectStatus: 400,
    seed: async (ctx) => {
      await seedAccountPool(ctx);
      // The last pool account: the load reaches it only after ACCOUNT_POOL requests.
      await expectBadCredentials(ctx, { username: poolEmail(ACCOUNT_POOL - 1), password: WRONG_PASSWORD });
    },
  },
  // No such account: one lookup, one Argon2id verification against a dummy hash, the same 400.
  // Next to login-wrong-password it shows whether timing tells which emails have an account. A
  // different unknown email per request: the failed-login budget is kept per email whether or not
  // it has an account.
  {
    name: "login-unknown",
    method: "POST",
    path: "/v1/auth/bearer/login",
    body: { username: "nobody.0@example.org", password: LOGIN_ACCOUNT.password },
    vary: (i) => ({ body: { username: `nobody.${i % UNKNOWN_EMAILS}@example.org`, password: LOGIN_ACCOUNT.password } }),
    expectStatus: 400,
    seed: async (ctx) => {
      await expectBadCredentials(ctx, { username: "nobody.here@example.org", password: LOGIN_ACCOUNT.password });
    },
  },
];
