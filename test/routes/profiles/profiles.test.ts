import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, me, patchMe, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import { bootstrapAdmin } from "../../support/mfa";

type Visibility = "public" | "community" | "private";

const create = (token: string, body: unknown) => postJson("/v1/products", body, bearer(token));

async function userWith(visibility: Visibility, prefix = "owner") {
  const user = await verifiedUser(prefix);
  if (visibility !== "public") {
    const response = await patchMe(user.tokens.access_token, { preferences: { profile_visibility: visibility } });
    expect(response.status, await response.clone().text()).toBe(200);
  }
  return user;
}

const profile = (username: string, token?: string) => api(`/v1/profiles/${username}`, token ? { headers: bearer(token) } : undefined);

describe("GET /v1/profiles/{username}", () => {
  it("counts the user's base products and their weight, not components, in one round trip", async () => {
    const user = await verifiedUser("counter");
    const token = user.tokens.access_token;
    for (const body of [
      { name: "Coffee grinder", weight_g: 1450, components: [{ name: "Motor", amount_in_parent: 1, weight_g: 900 }] },
      {
        name: "Kettle",
        weight_g: 250.5,
        components: [{ name: "Lid", amount_in_parent: 1, components: [{ name: "Knob", amount_in_parent: 1 }] }],
      },
      { name: "Unweighed lamp" },
    ]) {
      expect((await create(token, body)).status).toBe(201);
    }
    // Someone else's products never count.
    expect((await create((await verifiedUser("other")).tokens.access_token, { name: "Heavy press", weight_g: 99_000 })).status).toBe(201);

    const response = await profile(user.username);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(roundTrips(response)).toBe(1);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const { created_at } = (await (await me(token)).json()) as { created_at: string };
    // 1450 + 250.5 g = 1.7005 kg, to 3 decimals.
    expect(await response.json()).toEqual({
      username: user.username,
      created_at,
      product_count: 3,
      total_weight_kg: 1.701,
      image_count: 0,
      top_category: null,
    });

    // Signed in: the token check travels with the same single read.
    expect(roundTrips(await profile(user.username, token))).toBe(1);
  });

  it("names the category most of the user's base products fall in, through their product types", async () => {
    // Reference data is seeded directly: this test is about the profile, not the reference routes.
    await env.DB.batch([
      env.DB.prepare("INSERT INTO taxonomies (name, version, domains) VALUES ('profile test', '1', '[\"products\"]')"),
      env.DB.prepare("INSERT INTO categories (name, taxonomy_id) SELECT 'Kettles', id FROM taxonomies WHERE name = 'profile test'"),
      env.DB.prepare("INSERT INTO categories (name, taxonomy_id) SELECT 'Toasters', id FROM taxonomies WHERE name = 'profile test'"),
      env.DB.prepare("INSERT INTO product_types (name) VALUES ('Profile kettle'), ('Profile toaster')"),
      env.DB.prepare(`INSERT INTO product_type_categories (product_type_id, category_id)
        SELECT t.id, c.id FROM product_types t JOIN categories c ON (t.name, c.name) IN (VALUES ('Profile kettle', 'Kettles'), ('Profile toaster', 'Toasters'))`),
    ]);
    const types = await env.DB.prepare("SELECT id, name FROM product_types WHERE name LIKE 'Profile %'").all<{
      id: number;
      name: string;
    }>();
    const typeId = (name: string) => types.results.find((row) => row.name === name)!.id;
    const user = await verifiedUser("cats");
    const token = user.tokens.access_token;
    expect(await (await profile(user.username)).json()).toMatchObject({ top_category: null });
    for (const [name, type] of [
      ["Kettle A", "Profile kettle"],
      ["Kettle B", "Profile kettle"],
      ["Toaster", "Profile toaster"],
    ] as const) {
      expect((await create(token, { name, product_type_id: typeId(type) })).status).toBe(201);
    }
    expect(await (await profile(user.username)).json()).toMatchObject({ product_count: 3, top_category: "Kettles" });
  });

  it("answers zeros for a user without products", async () => {
    const user = await verifiedUser("empty");
    expect(await (await profile(user.username)).json()).toMatchObject({
      product_count: 0,
      total_weight_kg: 0,
      image_count: 0,
      top_category: null,
    });
  });

  it("follows the profile visibility for anonymous, signed-in, owner and admin viewers; hidden is 404", async () => {
    const [admin, stranger] = [await bootstrapAdmin(), await verifiedUser("stranger")];
    const expected: Record<Visibility, number[]> = {
      public: [200, 200, 200, 200],
      community: [404, 200, 200, 200],
      private: [404, 404, 200, 200],
    };
    for (const visibility of ["public", "community", "private"] as const) {
      const owner = await userWith(visibility);
      const viewers = [undefined, stranger.tokens.access_token, owner.tokens.access_token, admin.tokens.access_token];
      const responses = await Promise.all(viewers.map((token) => profile(owner.username, token)));
      expect(
        responses.map((r) => r.status),
        visibility,
      ).toEqual(expected[visibility]);
      for (const response of responses) {
        if (response.status === 404) await expectProblem(response, 404, "PROFILE_NOT_FOUND");
        else expect(response.headers.get("cache-control")).toBe("no-store");
      }
    }
  });

  it("hides a private profile from a superuser without TOTP", async () => {
    const owner = await userWith("private");
    const superuser = await verifiedUser("super");
    await env.DB.prepare("UPDATE users SET is_superuser = 1, role = 'lab' WHERE id = ?").bind(superuser.id).run();
    await expectProblem(await profile(owner.username, superuser.tokens.access_token), 404, "PROFILE_NOT_FOUND");
  });

  it("shows a private profile to its owner in one round trip, and to nobody once the owner's token is revoked", async () => {
    const owner = await userWith("private");
    const own = await profile(owner.username, owner.tokens.access_token);
    expect(own.status).toBe(200);
    expect(roundTrips(own)).toBe(1);
    expect((await api("/v1/auth/sessions/revoke-all", { method: "POST", headers: bearer(owner.tokens.access_token) })).status).toBe(204);
    const revoked = await profile(owner.username, owner.tokens.access_token);
    await expectProblem(revoked, 404, "PROFILE_NOT_FOUND");
    expect(roundTrips(revoked)).toBe(1);
  });

  it("answers 404 alike for unknown and impossible usernames", async () => {
    const owner = await verifiedUser("casing");
    await expectProblem(await profile("nobody_has_this_name"), 404, "PROFILE_NOT_FOUND");
    for (const name of [owner.username.toUpperCase(), "a", "x".repeat(51), "with-dash", "%20"]) {
      await expectProblem(await profile(name), 404, "PROFILE_NOT_FOUND");
    }
  });

  it("has no profile for the system account or a deactivated account, even for the admin", async () => {
    const admin = await bootstrapAdmin();
    await expectProblem(await profile("deleted"), 404, "PROFILE_NOT_FOUND");
    await expectProblem(await profile("deleted", admin.tokens.access_token), 404, "PROFILE_NOT_FOUND");

    const gone = await verifiedUser("gone");
    expect((await profile(gone.username)).status).toBe(200);
    await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(gone.id).run();
    await expectProblem(await profile(gone.username), 404, "PROFILE_NOT_FOUND");
    await expectProblem(await profile(gone.username, admin.tokens.access_token), 404, "PROFILE_NOT_FOUND");
  });

  it("is in the OpenAPI schema under Users", async () => {
    const document = (await (await api("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { operationId: string; tags: string[] }>>;
    };
    expect(document.paths["/v1/profiles/{username}"]?.get).toMatchObject({ operationId: "getProfile", tags: ["Users"] });
  });
});
