import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, me, patchMe, postJson, registerUser, verifiedUser } from "../../support/accounts";
import { countOf, deletionJobs, finishDeletionJobs, productWithComponents, runOneSlice } from "../../support/deletions";
import { api, apiWithVars, expectProblem } from "../../support/http";
import { bootstrapAdmin } from "../../support/mfa";

// Deleting an account with more records than one batch moves or deletes (50 records in the tests
// for `delete`, 125 for `anonymize`): one batch closes the account for good at once, and a
// deletion job moves or deletes its records in slices (docs/storage.md, "Deletion jobs").

type Body = Record<string, any>;

let admin: Awaited<ReturnType<typeof bootstrapAdmin>>;

beforeAll(async () => {
  admin = await bootstrapAdmin();
});

async function owner(prefix: string) {
  const user = await verifiedUser(prefix);
  expect((await patchMe(user.tokens.access_token, { preferences: { profile_visibility: "public" } })).status).toBe(200);
  expect((await postJson("/v1/users/me/contributor-terms", { version: 1 }, bearer(user.tokens.access_token))).status).toBe(200);
  return { ...user, headers: bearer(user.tokens.access_token) };
}

const adminDelete = (userId: number, content: "anonymize" | "delete", vars: Record<string, string> = {}) =>
  apiWithVars(vars, `/v1/admin/users/${userId}?content=${content}`, {
    method: "DELETE",
    headers: { ...bearer(admin.tokens.access_token), "content-type": "application/json" },
    body: JSON.stringify({ current_password: admin.password, mfa_code: admin.recoveryCodes.shift() }),
  });

/** What the account is to everyone right after the request: gone, its name and address free. */
async function expectClosed(user: Awaited<ReturnType<typeof owner>>) {
  expect((await me(user.tokens.access_token)).status).toBe(401);
  await expectProblem(
    await postJson("/v1/auth/bearer/refresh", { refresh_token: user.tokens.refresh_token }),
    401,
    "REFRESH_TOKEN_INVALID",
  );
  await expectProblem(
    await postJson("/v1/auth/bearer/login", { username: user.email, password: user.password }),
    400,
    "LOGIN_BAD_CREDENTIALS",
  );
  expect((await api(`/v1/profiles/${user.username}`)).status).toBe(404);
  expect((await api(`/v1/admin/users/${user.id}`, { headers: bearer(admin.tokens.access_token) })).status).toBe(404);
  const users = (await (await api("/v1/admin/users?size=100", { headers: bearer(admin.tokens.access_token) })).json()) as Body;
  expect(users.items.map((u: Body) => u.id)).not.toContain(user.id);
  // A second deletion finds no account.
  expect((await adminDelete(user.id, "delete")).status).toBe(404);
  // The address and the username are free at once.
  const again = await registerUser({ email: user.email, username: user.username, password: `${user.password}-again` });
  expect(again.id).not.toBe(user.id);
}

describe("deleting an account with more records than a slice", () => {
  it("with content=delete: closed and its products gone for every read at once, its rows removed in slices", async () => {
    const user = await owner("bigdel");
    // Seven base products of 1 + 9 records each; with slices of 2 records the request hides the
    // first of them (a hide slice is n/4, rounded up: docs/storage.md "Deletion jobs"), the job's
    // first slices the other six, then it deletes 70 records two at a time.
    const vars = { DELETION_SLICE_RECORDS: "2" };
    const products = [];
    for (let i = 0; i < 7; i++) products.push(await productWithComponents(user.headers, `Heater ${i}`, 9));
    const kept = await owner("bigkept");
    const keptProduct = await productWithComponents(kept.headers, "Heater kept", 3);

    expect((await adminDelete(user.id, "delete", vars)).status).toBe(204);
    for (const product of products.slice(0, 1)) {
      expect((await api(`/v1/products/${product.id}`)).status).toBe(404);
      expect((await api(`/v1/components/${product.components[8]}`)).status).toBe(404);
    }
    await expectClosed(user);
    for (const job of await deletionJobs()) expect(job).toMatchObject({ kind: "account", user_id: user.id, content: "delete" });

    await finishDeletionJobs(vars);
    for (const product of products) expect((await api(`/v1/products/${product.id}`)).status).toBe(404);
    expect(await countOf("SELECT 1 FROM products WHERE owner_id = ?", user.id)).toBe(0);
    expect(await countOf("SELECT 1 FROM users WHERE id = ?", user.id)).toBe(0);
    expect(await countOf("SELECT 1 FROM hidden_records")).toBe(0);
    expect((await api(`/v1/products/${keptProduct.id}`)).status).toBe(200);
    const search = (await (await api("/v1/products?search=heater")).json()) as Body;
    expect(search.items.map((item: Body) => item.id)).toEqual([keptProduct.id]);
  });

  it("with content=anonymize: closed at once, its products showing no owner, moved to the system account in slices", async () => {
    const user = await owner("biganon");
    const products = [];
    for (let i = 0; i < 3; i++) products.push(await productWithComponents(user.headers, `Fridge ${i}`, 99)); // 300 records: three slices
    expect((await adminDelete(user.id, "anonymize")).status).toBe(204);
    await expectClosed(user);
    for (const product of products) {
      const body = (await (await api(`/v1/products/${product.id}`)).json()) as Body;
      expect([body.owner_id, body.owner_username]).toEqual([null, null]);
      const component = (await (await api(`/v1/components/${product.components[98]}`)).json()) as Body;
      expect([component.owner_id, component.owner_username]).toEqual([null, null]);
    }
    // Its products left future releases at once: the account accepts no terms any more.
    expect(await countOf("SELECT 1 FROM users WHERE id = ? AND terms_accepted_version IS NOT NULL", user.id)).toBe(0);

    await finishDeletionJobs();
    expect(await countOf("SELECT 1 FROM users WHERE id = ?", user.id)).toBe(0);
    expect(
      await countOf(
        "SELECT 1 FROM products p JOIN users u ON u.id = p.owner_id WHERE p.root_id IN (?, ?, ?) AND u.is_system = 1",
        ...products.map((p) => p.id),
      ),
    ).toBe(300);
    for (const product of products) expect((await api(`/v1/products/${product.id}`)).status).toBe(200);
  });

  it("leaves nothing half-done when a slice dies, and the retry finishes the job", async () => {
    const user = await owner("bigdies");
    for (let i = 0; i < 2; i++) await productWithComponents(user.headers, `Freezer ${i}`, 40); // 82 records
    await env.DB.prepare(
      "CREATE TRIGGER test_account_slice_dies BEFORE UPDATE OF records_done ON deletion_jobs WHEN old.records_done >= 50 BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
    ).run();
    try {
      expect((await adminDelete(user.id, "delete")).status).toBe(204);
      const [job] = await deletionJobs();
      for (let i = 0; i < 3; i++) await runOneSlice(job!.id).catch(() => undefined);
      expect((await deletionJobs())[0]).toMatchObject({ records_done: 50 });
      expect(await countOf("SELECT 1 FROM products WHERE owner_id = ?", user.id)).toBe(32);
      expect(await countOf("SELECT 1 FROM users WHERE id = ? AND is_system = 2", user.id)).toBe(1);
    } finally {
      await env.DB.prepare("DROP TRIGGER test_account_slice_dies").run();
    }
    await finishDeletionJobs();
    expect(await countOf("SELECT 1 FROM products WHERE owner_id = ?", user.id)).toBe(0);
    expect(await countOf("SELECT 1 FROM users WHERE id = ?", user.id)).toBe(0);
    expect(await deletionJobs()).toEqual([]);
  });

  it("still refuses the last active superuser, and changes nothing", async () => {
    // The bootstrap superuser is the only one; its products make the deletion a job's.
    await productWithComponents(bearer(admin.tokens.access_token), "Admin's boiler", 60);
    const response = await api("/v1/users/me", {
      method: "DELETE",
      headers: { ...bearer(admin.tokens.access_token), "content-type": "application/json" },
      body: JSON.stringify({ current_password: admin.password, mfa_code: admin.recoveryCodes.shift() }),
    });
    await expectProblem(response, 409, "LAST_SUPERUSER");
    expect(await deletionJobs()).toEqual([]);
    expect((await me(admin.tokens.access_token)).status).toBe(200);
  });
});
