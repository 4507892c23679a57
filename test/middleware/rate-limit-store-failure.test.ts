import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { canonicalEmail } from "../../src/lib/email-address";
import { subjects } from "../../src/services/rate-limiter";
import { newIdentity, patchMe, postJson, registerUser, verifiedUser } from "../support/accounts";
import { api, expectProblem } from "../support/http";
import { freshIp, limitedApi } from "../support/limits";
import { captureLogs } from "../support/logs";

const counterStore = (subject: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(subject));

function counterTables(subject: string): Promise<string[]> {
  return runInDurableObject(counterStore(subject), (_, state) =>
    state.storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'counters%' ORDER BY name")
      .toArray()
      .map((row) => row.name),
  );
}

// The counter store is one Durable Object per subject. A local object cannot be unplugged, so
// each test takes its `counters` table away (a real failure of the store, not a mock) and puts
// it back afterwards.
async function withBrokenStore<T>(subject: string, work: () => Promise<T>): Promise<T> {
  await runInDurableObject(counterStore(subject), (_, state) => {
    state.storage.sql.exec("ALTER TABLE counters RENAME TO counters_offline");
  });
  try {
    return await work();
  } finally {
    await runInDurableObject(counterStore(subject), (_, state) => {
      state.storage.sql.exec("ALTER TABLE counters_offline RENAME TO counters");
    });
    // The same object answered throughout: its table is back under its own name, nothing else.
    expect(await counterTables(subject)).toEqual(["counters"]);
  }
}

const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

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
  it("serves a read when the IP's counter store is broken, without RateLimit headers, and logs it", async () => {
    const ip = freshIp();
    const logs = captureLogs();
    const response = await withBrokenStore(subjects.ip(ip), () => limitedApi(ip, "/v1/units")).finally(logs.restore);
    expect(response.status).toBe(200);
    expect(response.headers.get("ratelimit")).toBeNull();
    expect(response.headers.get("ratelimit-policy")).toBeNull();
    expect(limiterErrors(logs)).toEqual([{ level: "error", limits: "read-ip", fails: "open" }]);

    // Restored: the bucket answers again, and the request served without it was not counted.
    const after = await limitedApi(ip, "/v1/units");
    expect(after.status).toBe(200);
    expect(after.headers.get("ratelimit-policy")).toBe('"read-ip";q=300;w=60');
    expect(after.headers.get("ratelimit")).toMatch(/^"read-ip";r=299;t=\d+$/);
  });
});

describe("auth-route limits and guards fail closed", () => {
  it("refuses a login and a registration with 503 when the IP's counter store is broken", async () => {
    const ip = freshIp();
    const user = await registerUser();
    const newcomer = newIdentity("closed");
    const logs = captureLogs();
    await withBrokenStore(subjects.ip(ip), async () => {
      await expectUnavailable(await limitedApi(ip, "/v1/auth/bearer/login", json({ username: user.email, password: user.password })));
      await expectUnavailable(await limitedApi(ip, "/v1/auth/register", json(newcomer)));
    }).finally(logs.restore);
    expect(limiterErrors(logs)).toEqual([
      { level: "error", limits: "write-ip,login-ip", fails: "closed" },
      { level: "error", limits: "write-ip,register-ip", fails: "closed" },
    ]);
    // Nothing was done: no account for the refused registration.
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE email = ?").bind(newcomer.email).first<{ n: number }>();
    expect(rows?.n).toBe(0);

    // Restored: the same IP signs in and registers.
    expect((await limitedApi(ip, "/v1/auth/bearer/login", json({ username: user.email, password: user.password }))).status).toBe(200);
    expect((await limitedApi(ip, "/v1/auth/register", json(newcomer))).status).toBe(201);
  });

  it("refuses a login and a reset request with 503 when the account's email counter store is broken, limits off", async () => {
    const user = await registerUser();
    const [local, domain] = user.email.split("@") as [string, string];
    const logs = captureLogs();
    await withBrokenStore(subjects.email(env.AUTH_TOKEN_SECRET, canonicalEmail(user.email)), async () => {
      // The failed-login budget, whatever identifier names the account.
      await expectUnavailable(await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password }));
      await expectUnavailable(await postJson("/v1/auth/session/login", { username: user.username, password: user.password }));
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

  it("refuses a step-up with 503 when the user's counter store is broken", async () => {
    const user = await verifiedUser("stepup");
    const token = user.tokens.access_token;
    // Re-stating the current email runs the step-up without changing (or revoking) anything.
    const stepUp = () => patchMe(token, { email: user.email, current_password: user.password });
    const logs = captureLogs();
    await withBrokenStore(subjects.user(user.id), async () => {
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
