import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, bearerLogin, registerUser } from "../../support/accounts";
import { api, expectProblem } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { enrolTotp } from "../../support/mfa";

// A file of its own: storage is per file, and here the bootstrap superuser starts without TOTP.

const identity = { email: env.BOOTSTRAP_SUPERUSER_EMAIL, password: env.BOOTSTRAP_SUPERUSER_PASSWORD };

const adminCalls = (userId: number): { method: string; path: string; body?: unknown; status: number }[] => [
  { method: "GET", path: "/v1/admin/users", status: 200 },
  { method: "GET", path: `/v1/admin/users/${userId}`, status: 200 },
  { method: "PATCH", path: `/v1/admin/users/${userId}`, body: { is_verified: true }, status: 200 },
  { method: "PUT", path: `/v1/admin/users/${userId}/role`, body: { role: "lab" }, status: 200 },
  { method: "POST", path: `/v1/admin/users/${userId}/mfa/reset`, status: 204 },
  { method: "POST", path: "/v1/admin/cache/clear/stats", status: 200 },
];

function send(token: string, call: { method: string; path: string; body?: unknown }): Promise<Response> {
  const headers: Record<string, string> = bearer(token);
  if (call.body !== undefined) headers["content-type"] = "application/json";
  return api(call.path, { method: call.method, headers, ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }) });
}

describe("a superuser without TOTP on /v1/admin/*", () => {
  it("is refused with 403 ADMIN_TOTP_REQUIRED on every route until TOTP is enrolled, then let through", async () => {
    const user = await registerUser();
    const tokens = await bearerLogin(identity);
    const logs = captureLogs();
    try {
      for (const call of adminCalls(user.id)) {
        await expectProblem(await send(tokens.access_token, call), 403, "ADMIN_TOTP_REQUIRED");
      }
      const denials = logs.entries().filter((entry) => entry.event === "authorization.denied");
      expect(denials).toHaveLength(adminCalls(user.id).length);
      expect(denials.every((entry) => entry.reason === "ADMIN_TOTP_REQUIRED")).toBe(true);
    } finally {
      logs.restore();
    }
    // Nothing was changed by the refused calls.
    const enrolment = await enrolTotp(tokens.access_token, identity.password);
    const read = await send(enrolment.tokens.access_token, { method: "GET", path: `/v1/admin/users/${user.id}` });
    expect(await read.json()).toMatchObject({ is_verified: false, role: "contributor" });

    for (const call of adminCalls(user.id)) {
      const response = await send(enrolment.tokens.access_token, call);
      expect(response.status, `${call.method} ${call.path}: ${await response.clone().text()}`).toBe(call.status);
    }
    // Enrolment revoked the tokens signed in before it.
    await expectProblem(await send(tokens.access_token, adminCalls(user.id)[0]!), 401, "INVALID_TOKEN");
  });
});
