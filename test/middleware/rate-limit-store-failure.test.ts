import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { canonicalEmail } from "../../src/lib/email-address";
import { subjects } from "../../src/rate-limits/client";
import { newIdentity, patchMe, postJson, registerUser, verifiedUser } from "../support/accounts";
import { api, expectProblem } from "../support/http";
import { freshIp, json, limitedApi, PRODUCTION_STORE_TIMEOUT, stallStore, withBrokenTable } from "../support/limits";
import { captureLogs } from "../support/logs";

// A local object cannot be unplugged. Durable counters (guards, hour windows) fail for real when
// their table is taken away; memory counters (minute request rates) when the object is kept too
// busy to answer within the limiter's time-out (1 s fail open, 5 s fail closed).

async function expectUnavailable(response: Response): Promise<void> {
  await expectProblem(response, 503, "AUTH_STORE_UNAVAILABLE");
  expect(response.headers.get("retry-after")).toBe("5");
  expect(response.headers.get("ratelimit")).toBeNull();
  expect(response.headers.get("ratelimit-policy")).toBeNull();
}

function limiterErrors(logs: ReturnType<typeof captureLogs>) {
  return logs
    .entries()
    .filter((entry) => entry.msg === "rate limiter unavailable")
    .map((entry) => ({ level: entry.level, limits: entry.limits, fails: entry.fails }));
}

describe("request-rate limits fail open", () => {
  it("serves a read when the IP's counter store does not answer in time, without RateLimit headers, and logs it", async () => {
    const ip = freshIp();
    const logs = captureLogs();
    const stall = await stallStore(subjects.ip(ip), 1_500);
    const response = await limitedApi(ip, "/v1/units", {}, PRODUCTION_STORE_TIMEOUT).finally(logs.restore);
    expect(response.status).toBe(200);
    expect(response.headers.get("ratelimit")).toBeNull();
    expect(response.headers.get("ratelimit-policy")).toBeNull();
    expect(limiterErrors(logs)).toEqual([{ level: "error", limits: "read-ip", fails: "open" }]);
    await stall.ended;

    // Once the store answers again, so does the bucket.
    const after = await limitedApi(ip, "/v1/units");
    expect(after.status).toBe(200);
    expect(after.headers.get("ratelimit-policy")).toBe('"read-ip";q=300;w=60');
  });

  it("waits as long as RATE_LIMIT_STORE_TIMEOUT_MS says: a store 1.5 s late still counts the read when given 4 s", async () => {
    const ip = freshIp();
    const logs = captureLogs();
    const stall = await stallStore(subjects.ip(ip), 1_500);
    const response = await limitedApi(ip, "/v1/units", {}, { RATE_LIMIT_STORE_TIMEOUT_MS: "4000" }).finally(logs.restore);
    await stall.ended;
    expect(response.status).toBe(200);
    expect(response.headers.get("ratelimit")).toMatch(/^"read-ip";r=299;t=\d+$/);
    expect(limiterErrors(logs)).toEqual([]);
  });
});

describe("auth-route limits and guards fail closed", () => {
  it("refuses a login with 503 when the IP's counter store does not answer in time", async () => {
    const ip = freshIp();
    const user = await registerUser();
    const logs = captureLogs();
    const stall = await stallStore(subjects.ip(ip), 6_000);
    const login = json({ username: user.email, password: user.password });
    const response = await limitedApi(ip, "/v1/auth/bearer/login", login, PRODUCTION_STORE_TIMEOUT).finally(logs.restore);
    await expectUnavailable(response);
    expect(limiterErrors(logs)).toEqual([{ level: "error", limits: "write-ip,login-ip", fails: "closed" }]);
    await stall.ended;
    expect((await limitedApi(ip, "/v1/auth/bearer/login", json({ username: user.email, password: user.password }))).status).toBe(200);
  }, 20_000);

  it("refuses a registration with 503 when the IP's counter store is broken", async () => {
    const ip = freshIp();
    const newcomer = newIdentity("closed");
    const logs = captureLogs();
    await withBrokenTable(subjects.ip(ip), async () => {
      await expectUnavailable(await limitedApi(ip, "/v1/auth/register", json(newcomer)));
    }).finally(logs.restore);
    expect(limiterErrors(logs)).toEqual([{ level: "error", limits: "write-ip,register-ip", fails: "closed" }]);
    // Nothing was done: no account for the refused registration.
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE email = ?").bind(newcomer.email).first<{ n: number }>();
    expect(rows?.n).toBe(0);
    // Restored: the same IP registers.
    expect((await limitedApi(ip, "/v1/auth/register", json(newcomer))).status).toBe(201);
  });

  it("refuses a login and a reset request with 503 when the account's email counter store is broken, limits off", async () => {
    const user = await registerUser();
    const [local, domain] = user.email.split("@") as [string, string];
    const logs = captureLogs();
    await withBrokenTable(subjects.email(env.AUTH_TOKEN_SECRET, canonicalEmail(user.email)), async () => {
      // The failed-login budget of the address, whatever spelling of it.
      await expectUnavailable(await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password }));
      await expectUnavailable(await postJson("/v1/auth/session/login", { username: `${local}+tag@${domain}`, password: user.password }));
      // The username has a budget of its own, in another object: it still signs in.
      const byUsername = await postJson("/v1/auth/session/login", { username: user.username, password: user.password });
      expect(byUsername.status, await byUsername.clone().text()).toBe(204);
      // The reset-mail guard of the mailbox, whatever spelling of it.
      await expectUnavailable(await postJson("/v1/auth/forgot-password", { email: user.email }));
      await expectUnavailable(await postJson("/v1/auth/forgot-password", { email: `${local.toUpperCase()}+tag@${domain}` }));
    }).finally(logs.restore);
    expect(limiterErrors(logs)).toEqual([
      { level: "error", limits: "failed-login", fails: "closed" },
      { level: "error", limits: "failed-login", fails: "closed" },
      { level: "error", limits: "forgot-password-email", fails: "closed" },
      { level: "error", limits: "forgot-password-email", fails: "closed" },
    ]);

    const restored = await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password });
    expect(restored.status, await restored.clone().text()).toBe(200);
    expect((await postJson("/v1/auth/forgot-password", { email: user.email })).status).toBe(202);
  });

  it("refuses a login by username with 503 when that username's counter store is broken, limits off", async () => {
    const user = await registerUser();
    const logs = captureLogs();
    await withBrokenTable(subjects.email(env.AUTH_TOKEN_SECRET, `username:${user.username}`), async () => {
      // In any case: the budget is keyed by the lower-cased username.
      await expectUnavailable(await postJson("/v1/auth/session/login", { username: user.username, password: user.password }));
      await expectUnavailable(await postJson("/v1/auth/bearer/login", { username: user.username.toUpperCase(), password: user.password }));
      // The address's budget is another object: it still signs in.
      expect((await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password })).status).toBe(200);
    }).finally(logs.restore);
    expect(limiterErrors(logs)).toEqual([
      { level: "error", limits: "failed-login", fails: "closed" },
      { level: "error", limits: "failed-login", fails: "closed" },
    ]);

    expect((await postJson("/v1/auth/session/login", { username: user.username, password: user.password })).status).toBe(204);
  });

  it("refuses a step-up with 503 when the user's counter store is broken", async () => {
    const user = await verifiedUser("stepup");
    const token = user.tokens.access_token;
    // Re-stating the current email runs the step-up without changing (or revoking) anything.
    const stepUp = () => patchMe(token, { email: user.email, current_password: user.password });
    const logs = captureLogs();
    await withBrokenTable(subjects.user(user.id), async () => {
      await expectUnavailable(await stepUp());
      // A real change is refused the same way, and is not applied.
      await expectUnavailable(await patchMe(token, { email: `moved.${user.email}`, current_password: user.password }));
    }).finally(logs.restore);
    expect(limiterErrors(logs)).toEqual([
      { level: "error", limits: "wrong-secret-minute,wrong-secret-day", fails: "closed" },
      { level: "error", limits: "wrong-secret-minute,wrong-secret-day", fails: "closed" },
    ]);

    const me = await api("/v1/users/me", { headers: { authorization: `Bearer ${token}` } });
    expect(((await me.json()) as { email: string }).email).toBe(user.email);
    expect((await stepUp()).status).toBe(200);
  });
});
