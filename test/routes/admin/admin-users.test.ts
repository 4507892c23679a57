import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, bearerLogin, me, newIdentity, postJson, registerUser, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { bootstrapAdmin, enrolTotp } from "../../support/mfa";

interface AdminUser {
  id: number;
  email: string;
  username: string;
  is_active: boolean;
  is_verified: boolean;
  is_superuser: boolean;
  role: "contributor" | "lab";
  totp_enabled: boolean;
}

interface Page {
  items: AdminUser[];
  total: number;
  page: number;
  size: number;
  pages: number;
}

/** A request as the bootstrap superuser (TOTP enrolled), with a JSON body when given. */
async function asAdmin(method: string, path: string, body?: unknown): Promise<Response> {
  const admin = await bootstrapAdmin();
  const headers: Record<string, string> = bearer(admin.tokens.access_token);
  if (body !== undefined) headers["content-type"] = "application/json";
  return api(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

async function listUsers(query: string): Promise<Page> {
  const response = await asAdmin("GET", `/v1/admin/users?${query}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as Page;
}

const setRole = (userId: number, role: string) => asAdmin("PUT", `/v1/admin/users/${userId}/role`, { role });
const patchUser = (userId: number, body: unknown) => asAdmin("PATCH", `/v1/admin/users/${userId}`, body);
const resetMfa = (userId: number) => asAdmin("POST", `/v1/admin/users/${userId}/mfa/reset`);
const login = (identity: { email: string; password: string }) =>
  postJson("/v1/auth/bearer/login", { username: identity.email, password: identity.password });

/** Three fresh accounts sharing a prefix no other account has, in id order. */
async function cohort() {
  const prefix = `c${Date.now().toString(36)}${Math.floor(Math.random() * 1e4).toString(36)}`;
  const users = [];
  for (let i = 0; i < 3; i++) users.push(await registerUser(newIdentity(prefix)));
  return { prefix, users };
}

async function systemAccountId(): Promise<number> {
  // Fixture lookup only: the migration creates this account, and no route reveals its id.
  const row = await env.DB.prepare("SELECT id FROM users WHERE is_system = 1").first<{ id: number }>();
  return row!.id;
}

describe("GET /v1/admin/users", () => {
  it("pages through accounts in id order, with the full admin view of each", async () => {
    const { prefix, users } = await cohort();
    const firstResponse = await asAdmin("GET", `/v1/admin/users?search=${prefix}&size=2`);
    expect(roundTrips(firstResponse)).toBe(2); // token check; the page and the count in one batch
    const first = (await firstResponse.json()) as Page;
    expect(first).toMatchObject({ total: 3, page: 1, size: 2, pages: 2 });
    const second = await listUsers(`search=${prefix}&size=2&page=2`);
    expect([...first.items, ...second.items].map((u) => u.id)).toEqual(users.map((u) => u.id));
    expect(first.items[0]).toEqual({
      id: users[0]!.id,
      email: users[0]!.email,
      username: users[0]!.username,
      is_active: true,
      is_verified: false,
      is_superuser: false,
      role: "contributor",
      totp_enabled: false,
      has_usable_password: true,
      profile_visibility: "public",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      last_login_at: null,
      upload_file_count: 0,
      upload_total_bytes: 0,
    });
    expect((await listUsers(`search=${prefix}&page=3&size=2`)).items).toEqual([]);
  });

  it("searches username or email case-insensitively, with % and _ as plain characters", async () => {
    const { prefix } = await cohort();
    expect((await listUsers(`search=${prefix.toUpperCase()}`)).total).toBe(3);
    // The dot follows the prefix only in the email addresses.
    expect((await listUsers(`search=${encodeURIComponent(`${prefix}.`)}`)).total).toBe(3);
    // An escaped `_` still matches itself (usernames are `<prefix>_<n>`); `%` and a wildcard `_` would match more.
    expect((await listUsers(`search=${encodeURIComponent(`${prefix}_`)}`)).total).toBe(3);
    expect((await listUsers(`search=${encodeURIComponent(`${prefix}%`)}`)).total).toBe(0);
    expect((await listUsers(`search=${encodeURIComponent(`${prefix.slice(0, -1)}_`)}`)).total).toBe(0);
  });

  it("filters by role, active state and superuser status", async () => {
    const admin = await bootstrapAdmin();
    const { prefix, users } = await cohort();
    expect((await setRole(users[0]!.id, "lab")).status).toBe(200);
    expect((await patchUser(users[1]!.id, { is_active: false })).status).toBe(200);

    expect((await listUsers(`search=${prefix}&role=lab`)).items.map((u) => u.id)).toEqual([users[0]!.id]);
    expect((await listUsers(`search=${prefix}&role=contributor`)).total).toBe(2);
    expect((await listUsers(`search=${prefix}&is_active=false`)).items.map((u) => u.id)).toEqual([users[1]!.id]);
    expect((await listUsers(`search=${prefix}&is_active=true`)).total).toBe(2);
    expect((await listUsers(`search=${prefix}&is_superuser=false`)).total).toBe(3);
    const superusers = await listUsers("is_superuser=true");
    expect(superusers.items.map((u) => u.id)).toEqual([admin.id]);
    expect(superusers.items[0]).toMatchObject({ is_superuser: true, role: "lab", totp_enabled: true });
  });

  it("never lists the system account that holds deleted users' products", async () => {
    expect((await listUsers("search=deleted")).total).toBe(0);
    const systemId = await systemAccountId();
    const everyone = await listUsers("size=100&is_active=false");
    expect(everyone.items.some((u) => u.id === systemId)).toBe(false);
    expect((await listUsers("size=100")).items.some((u) => u.id === systemId)).toBe(false);
  });

  it.each([
    ["bogus=1", "#/query/bogus"],
    ["is_active=yes", "#/query/is_active"],
    ["is_superuser=1", "#/query/is_superuser"],
    ["role=admin", "#/query/role"],
    ["search=", "#/query/search"],
    [`search=${"a".repeat(101)}`, "#/query/search"],
    ["size=101", "#/query/size"],
  ])("refuses the query %s with 422", async (query, pointer) => {
    const problem = await expectProblem(await asAdmin("GET", `/v1/admin/users?${query}`), 422, "VALIDATION_FAILED");
    expect(problem.errors?.map((e) => e.pointer)).toContain(pointer);
  });
});

describe("GET /v1/admin/users/{user_id}", () => {
  it("reads an account", async () => {
    const user = await verifiedUser();
    const response = await asAdmin("GET", `/v1/admin/users/${user.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toMatchObject({
      id: user.id,
      email: user.email,
      is_verified: true,
      last_login_at: expect.stringMatching(/Z$/),
    });
  });

  it("answers 404 USER_NOT_FOUND on every route for an unknown id and for the system account", async () => {
    for (const id of [999_999, await systemAccountId()]) {
      await expectProblem(await asAdmin("GET", `/v1/admin/users/${id}`), 404, "USER_NOT_FOUND");
      await expectProblem(await patchUser(id, { is_verified: true }), 404, "USER_NOT_FOUND");
      await expectProblem(await patchUser(id, {}), 404, "USER_NOT_FOUND");
      await expectProblem(await setRole(id, "lab"), 404, "USER_NOT_FOUND");
      await expectProblem(await resetMfa(id), 404, "USER_NOT_FOUND");
    }
    await expectProblem(await asAdmin("GET", "/v1/admin/users/abc"), 422, "VALIDATION_FAILED");
  });
});

describe("PUT /v1/admin/users/{user_id}/role", () => {
  it("sets lab and back to contributor, which the user sees in /v1/users/me", async () => {
    const user = await verifiedUser();
    for (const role of ["lab", "contributor"] as const) {
      const response = await setRole(user.id, role);
      expect(response.status).toBe(200);
      expect(roundTrips(response)).toBe(2);
      expect(await response.json()).toMatchObject({ id: user.id, role });
      expect(await (await me(user.tokens.access_token)).json()).toMatchObject({ role });
    }
  });

  it("refuses to demote a superuser (400) and refuses unknown roles (422)", async () => {
    const admin = await bootstrapAdmin();
    await expectProblem(await setRole(admin.id, "contributor"), 400, "SUPERUSER_ROLE_FIXED");
    expect(await (await setRole(admin.id, "lab")).json()).toMatchObject({ role: "lab", is_superuser: true });
    const user = await registerUser();
    await expectProblem(await setRole(user.id, "superuser"), 422, "VALIDATION_FAILED");
    await expectProblem(
      await asAdmin("PUT", `/v1/admin/users/${user.id}/role`, { role: "lab", is_superuser: true }),
      422,
      "VALIDATION_FAILED",
    );
  });
});

describe("PATCH /v1/admin/users/{user_id}", () => {
  it("deactivates: old tokens are refused and login fails; reactivation lets the user sign in again", async () => {
    const user = await verifiedUser();
    const response = await patchUser(user.id, { is_active: false });
    expect(response.status).toBe(200);
    expect(roundTrips(response)).toBe(2); // token check; update, revocation and challenges in one batch
    expect(await response.json()).toMatchObject({ id: user.id, is_active: false });

    await expectProblem(await me(user.tokens.access_token), 401, "INVALID_TOKEN");
    await expectProblem(
      await postJson("/v1/auth/bearer/refresh", { refresh_token: user.tokens.refresh_token }),
      401,
      "REFRESH_TOKEN_INVALID",
    );
    await expectProblem(await login(user), 400, "LOGIN_BAD_CREDENTIALS");

    expect(await (await patchUser(user.id, { is_active: true })).json()).toMatchObject({ is_active: true });
    const tokens = await bearerLogin(user);
    expect((await me(tokens.access_token)).status).toBe(200);
  });

  it("refuses to deactivate the last active superuser (409) and leaves it untouched", async () => {
    const admin = await bootstrapAdmin();
    await expectProblem(await patchUser(admin.id, { is_active: false, is_verified: false }), 409, "LAST_SUPERUSER");
    const after = await asAdmin("GET", `/v1/admin/users/${admin.id}`);
    expect(after.status).toBe(200);
    expect(await after.json()).toMatchObject({ is_active: true, is_verified: true });
  });

  it("counts only active superusers: another one may be deactivated, then the last one may not", async () => {
    const admin = await bootstrapAdmin();
    const other = await registerUser();
    // Fixture: no route makes a superuser.
    await env.DB.prepare("UPDATE users SET is_superuser = 1, role = 'lab' WHERE id = ?").bind(other.id).run();
    expect((await listUsers("is_superuser=true&is_active=true")).total).toBe(2);
    expect(await (await patchUser(other.id, { is_active: false })).json()).toMatchObject({ is_active: false, is_superuser: true });
    await expectProblem(await patchUser(admin.id, { is_active: false }), 409, "LAST_SUPERUSER");
    // Reactivating, or deactivating again an inactive superuser, is not a removal.
    expect((await patchUser(other.id, { is_active: false })).status).toBe(200);
    expect((await patchUser(other.id, { is_active: true })).status).toBe(200);
    // Back to one superuser, as the other tests of this file expect.
    await env.DB.prepare("UPDATE users SET is_superuser = 0 WHERE id = ?").bind(other.id).run();
  });

  it("sets the verified state and renames with the registration rules", async () => {
    const admin = await bootstrapAdmin();
    const user = await verifiedUser();
    const other = await registerUser();
    expect(await (await patchUser(user.id, { is_verified: false })).json()).toMatchObject({ is_verified: false });
    const username = `${user.username}_r`.slice(0, 50);
    expect(await (await patchUser(user.id, { username })).json()).toMatchObject({ username });
    await expectProblem(await patchUser(user.id, { username: other.username }), 409, "USERNAME_TAKEN");
    await expectProblem(await patchUser(user.id, { username: "root" }), 422, "USERNAME_INVALID");
    await expectProblem(await patchUser(user.id, { username: "Not Valid" }), 422, "VALIDATION_FAILED");
    // The bootstrap superuser's reserved name may be sent back unchanged.
    const own = await patchUser(admin.id, { username: "admin" });
    expect(own.status, await own.clone().text()).toBe(200);
    expect(await (await patchUser(user.id, {})).json()).toMatchObject({ id: user.id, username });
  });

  it.each([{ role: "lab" }, { is_superuser: true }, { email: "x@example.org" }, { id: 1 }])(
    "refuses the member %j with 422",
    async (member) => {
      const user = await registerUser();
      const problem = await expectProblem(await patchUser(user.id, member), 422, "VALIDATION_FAILED");
      expect(problem.errors?.[0]?.pointer).toBe(`/${Object.keys(member)[0]}`);
    },
  );
});

describe("POST /v1/admin/users/{user_id}/mfa/reset", () => {
  it("removes TOTP and revokes the sessions: the user signs in with the password alone", async () => {
    const user = await verifiedUser();
    const enrolment = await enrolTotp(user.tokens.access_token, user.password);
    const pending = await login(user);
    expect(pending.status).toBe(202);
    const { mfa_token } = (await pending.json()) as { mfa_token: string };

    const response = await resetMfa(user.id);
    expect(response.status).toBe(204);
    expect(roundTrips(response)).toBe(2);
    expect(await response.text()).toBe("");

    await expectProblem(await me(enrolment.tokens.access_token), 401, "INVALID_TOKEN");
    await expectProblem(
      await postJson("/v1/auth/mfa/challenge", { mfa_token, code: enrolment.authenticator.next() }),
      401,
      "MFA_TOKEN_INVALID",
    );
    const signedIn = await login(user);
    expect(signedIn.status).toBe(200);
    expect(await (await asAdmin("GET", `/v1/admin/users/${user.id}`)).json()).toMatchObject({ totp_enabled: false });
    // A user may enrol again afterwards.
    const { access_token } = (await signedIn.json()) as { access_token: string };
    await enrolTotp(access_token, user.password);
  });

  it("is idempotent: 204 for an account without TOTP, whose sessions still end", async () => {
    const user = await verifiedUser();
    expect((await resetMfa(user.id)).status).toBe(204);
    expect((await resetMfa(user.id)).status).toBe(204);
    await expectProblem(await me(user.tokens.access_token), 401, "INVALID_TOKEN");
    expect((await login(user)).status).toBe(200);
  });
});

describe("who may use the admin routes", () => {
  const routes = (id: number): [string, string, unknown?][] => [
    ["GET", "/v1/admin/users"],
    ["GET", `/v1/admin/users/${id}`],
    ["PATCH", `/v1/admin/users/${id}`, { is_verified: true }],
    ["PUT", `/v1/admin/users/${id}/role`, { role: "lab" }],
    ["POST", `/v1/admin/users/${id}/mfa/reset`],
    ["POST", "/v1/admin/cache/clear/stats"],
  ];
  const send = (method: string, path: string, body: unknown, headers: Record<string, string>) =>
    api(path, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it("refuses an ordinary signed-in user with 403 SUPERUSER_REQUIRED, and changes nothing", async () => {
    const user = await verifiedUser();
    for (const [method, path, body] of routes(user.id)) {
      await expectProblem(await send(method, path, body, bearer(user.tokens.access_token)), 403, "SUPERUSER_REQUIRED");
    }
    expect(await (await me(user.tokens.access_token)).json()).toMatchObject({ role: "contributor" });
  });

  it("refuses anonymous requests with 401", async () => {
    const user = await registerUser();
    for (const [method, path, body] of routes(user.id)) {
      const response = await send(method, path, body, {});
      await expectProblem(response, 401, "AUTHENTICATION_REQUIRED");
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
  });
});

describe("audit of admin actions", () => {
  it("records each change with the actor and the target, never an email address", async () => {
    const admin = await bootstrapAdmin();
    const user = await verifiedUser();
    const logs = captureLogs();
    try {
      await setRole(user.id, "lab");
      await patchUser(user.id, { is_verified: false, is_active: false });
      await patchUser(user.id, { is_active: true });
      await resetMfa(user.id);

      const audits = logs.entries().filter((entry) => entry.msg === "audit" && String(entry.event).startsWith("admin."));
      expect(audits.map((entry) => entry.event)).toEqual([
        "admin.user.role_changed",
        "admin.user.updated",
        "admin.user.updated",
        "admin.user.mfa_reset",
      ]);
      expect(audits.every((entry) => entry.actor_id === admin.id && entry.user_id === user.id)).toBe(true);
      expect(audits[0]).toMatchObject({ from: "contributor", to: "lab" });
      expect(audits[1]).toMatchObject({ fields: ["is_active", "is_verified"] });
      expect(audits[2]).toMatchObject({ fields: ["is_active"] });
      expect(audits[3]).toMatchObject({ was_enrolled: false });

      const auditLines = logs.lines.filter((line) => line.includes('"audit"'));
      expect(auditLines.length).toBeGreaterThanOrEqual(4);
      for (const line of auditLines) {
        expect(line).not.toContain(user.email);
        expect(line).not.toContain(admin.email);
        expect(line).not.toMatch(/[\w.+-]+@[\w-]+\.[\w.]+/);
      }
    } finally {
      logs.restore();
    }
  });
});
