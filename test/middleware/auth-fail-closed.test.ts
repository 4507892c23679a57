import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { bearer, bearerLogin, me, postJson, registerUser } from "../support/accounts";
import { api, expectProblem } from "../support/http";

// The token store is D1. A local D1 cannot be unplugged, so each test takes the table an auth
// flow needs away (a real failure of the store, not a mock) and puts it back afterwards.
async function without<T>(table: string, work: () => Promise<T>): Promise<T> {
  await env.DB.exec(`ALTER TABLE ${table} RENAME TO ${table}_offline`);
  try {
    return await work();
  } finally {
    await env.DB.exec(`ALTER TABLE ${table}_offline RENAME TO ${table}`);
  }
}

async function expectUnavailable(response: Response) {
  await expectProblem(response, 503, "AUTH_STORE_UNAVAILABLE");
  expect(response.headers.get("retry-after")).toBe("5");
}

describe("auth flows fail closed without their token store", () => {
  afterEach(async () => {
    // A failed rename must not leak into the next test.
    expect((await env.DB.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name LIKE '%_offline'").first<{ n: number }>())?.n).toBe(0);
  });

  it("refuses a login it cannot record with 503", async () => {
    const user = await registerUser();
    await without("refresh_tokens", async () => {
      await expectUnavailable(await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password }));
    });
  });

  it("refuses a signed-in request it cannot check with 503, never as anonymous", async () => {
    const user = await registerUser();
    const pair = await bearerLogin(user);
    await without("refresh_tokens", async () => {
      await expectUnavailable(await me(pair.access_token));
      await expectUnavailable(await api("/v1/auth/sessions/revoke-all", { method: "POST", headers: bearer(pair.access_token) }));
      await expectUnavailable(await postJson("/v1/auth/bearer/refresh", { refresh_token: pair.refresh_token }));
    });
    expect((await me(pair.access_token)).status).toBe(200);
  });

  it("refuses a signed-in cached read whose token check rides in the read's batch with 503", async () => {
    const user = await registerUser();
    const pair = await bearerLogin(user);
    await without("refresh_tokens", async () => {
      await expectUnavailable(await api("/v1/products", { headers: bearer(pair.access_token) }));
      await expectUnavailable(await api("/v1/products/1", { headers: bearer(pair.access_token) }));
    });
    expect((await api("/v1/products", { headers: bearer(pair.access_token) })).status).toBe(200);
  });

  it("refuses the other signed-in reads whose token check rides in the read's batch with 503: media, profiles, releases", async () => {
    const user = await registerUser();
    const pair = await bearerLogin(user);
    const paths = [
      "/v1/products/1/images",
      `/v1/products/1/images/${"a".repeat(32)}`,
      "/v1/profiles/someone",
      "/v1/users/1/products",
      "/v1/releases",
      "/v1/releases/2026.1",
      "/v1/releases/2026.1/files/README.md",
    ];
    await without("refresh_tokens", async () => {
      for (const path of paths) {
        const response = await api(path, { headers: bearer(pair.access_token) });
        expect(response.status, `${path}: ${await response.clone().text()}`).toBe(503);
        await expectUnavailable(response);
      }
    });
  });

  it("refuses a signed-in export whose token check rides in its first chunk's batch with 503", async () => {
    const user = await registerUser();
    const pair = await bearerLogin(user);
    await without("refresh_tokens", async () => {
      for (const path of ["/v1/products/export", "/v1/products/export?format=json&owner=me", "/v1/products/1/export"]) {
        await expectUnavailable(await api(path, { headers: bearer(pair.access_token) }));
      }
      // The export itself does not need the table: anonymous, it is answered.
      const anonymous = await api("/v1/products/export");
      expect(anonymous.status).toBe(200);
      await anonymous.arrayBuffer();
    });
    const signedIn = await api("/v1/products/export", { headers: bearer(pair.access_token) });
    expect(signedIn.status).toBe(200);
    await signedIn.arrayBuffer();
  });
});
