import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { verifyPassword } from "../../src/auth/password";
import { api, roundTrips } from "../support/http";
import { startAsNewIsolate } from "../support/new-isolate";

// What an isolate does on its first request: a first request again in the shared runtime.
await startAsNewIsolate();

interface UserRow {
  id: number;
  email: string;
  username: string;
  hashed_password: string;
  is_active: number;
  is_verified: number;
  is_superuser: number;
  role: string;
}

describe("bootstrap superuser", () => {
  it("exists before the first answer, once, even when the first requests arrive together", async () => {
    // Only the system account (migration 0006) exists before the first request.
    const before = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE is_system = 0").first<{ n: number }>();
    expect(before?.n).toBe(0);

    const superusers = async () =>
      (await env.DB.prepare("SELECT count(*) AS n FROM users WHERE is_superuser = 1").first<{ n: number }>())?.n;
    // Two different D1 reads: a second /v1/units could be answered from the cache the first filled.
    const paths = ["/live", "/v1/units", "/health", "/v1/products", "/v1/nowhere"];
    // Each count is taken the moment its response arrives: work deferred to waitUntil would show as 0.
    const answered = await Promise.all(
      paths.map(async (path) => {
        const response = await api(path);
        return { response, superusersThen: await superusers() };
      }),
    );
    expect(answered.map((a) => a.superusersThen)).toEqual([1, 1, 1, 1, 1]);
    const responses = answered.map((a) => a.response);
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200, 404]);
    // The bootstrap's own queries use a separate client and are not charged to the request.
    expect(responses.map(roundTrips)).toEqual([0, 1, 1, 1, 0]);

    const { results } = await env.DB.prepare("SELECT * FROM users WHERE is_superuser = 1").all<UserRow>();
    expect(results).toHaveLength(1);
    const admin = results[0]!;
    expect(admin).toMatchObject({
      email: env.BOOTSTRAP_SUPERUSER_EMAIL,
      username: "admin",
      is_active: 1,
      is_verified: 1,
      is_superuser: 1,
      role: "lab",
    });
    expect(admin.hashed_password).toMatch(/^\$argon2id\$v=19\$/);
    expect(verifyPassword(env.BOOTSTRAP_SUPERUSER_PASSWORD, admin.hashed_password)).toBe(true);
  });
});
