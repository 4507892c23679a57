import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, patchMe, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import { bootstrapAdmin } from "../../support/mfa";

type Visibility = "public" | "community" | "private";

interface Page {
  items: { id: number; name: string; owner_id: number | null; owner_username: string | null }[];
  total: number;
  page: number;
  size: number;
  pages: number;
}

const create = async (token: string, body: unknown): Promise<number> => {
  const response = await postJson("/v1/products", body, bearer(token));
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { id: number }).id;
};

const list = (userId: number | string, query = "", token?: string) =>
  api(`/v1/users/${userId}/products${query}`, token ? { headers: bearer(token) } : undefined);

async function userWith(visibility: Visibility, prefix = "owner") {
  const user = await verifiedUser(prefix);
  if (visibility !== "public") {
    const response = await patchMe(user.tokens.access_token, { preferences: { profile_visibility: visibility } });
    expect(response.status, await response.clone().text()).toBe(200);
  }
  return user;
}

let alice: Awaited<ReturnType<typeof verifiedUser>>;
let bob: Awaited<ReturnType<typeof verifiedUser>>;

beforeAll(async () => {
  [alice, bob] = [await verifiedUser("alice"), await verifiedUser("bob")];
  // Same names for both owners, so a filter alone could not keep Bob's out.
  for (const name of ["Alpha kettle", "Beta kettle", "Gamma toaster"]) {
    await create(alice.tokens.access_token, { name, brand: "acme", components: [{ name: "Element kettle part", amount_in_parent: 1 }] });
    await create(bob.tokens.access_token, { name, brand: "acme" });
  }
});

describe("GET /v1/users/{user_id}/products", () => {
  it("lists only that user's base products, in one round trip, never anyone else's", async () => {
    const response = await list(alice.id);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(roundTrips(response)).toBe(1);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const page = (await response.json()) as Page;
    expect(page).toMatchObject({ total: 3, page: 1, size: 50, pages: 1 });
    // Newest first by default; components are not listed.
    expect(page.items.map((item) => item.name)).toEqual(["Gamma toaster", "Beta kettle", "Alpha kettle"]);
    expect(new Set(page.items.map((item) => item.owner_id))).toEqual(new Set([alice.id]));

    const bobs = (await (await list(bob.id)).json()) as Page;
    expect(bobs.total).toBe(3);
    expect(bobs.items.some((item) => page.items.some((mine) => mine.id === item.id))).toBe(false);

    // Signed in: the token check travels in the same single batch.
    expect(roundTrips(await list(alice.id, "", bob.tokens.access_token))).toBe(1);
  });

  it("takes the filters, ordering and paging of GET /v1/products and answers the same items", async () => {
    const query = "?name[ilike]=KETTLE&order_by=name&size=1";
    const first = (await (await list(alice.id, query)).json()) as Page;
    expect(first).toMatchObject({ total: 2, page: 1, size: 1, pages: 2 });
    expect(first.items.map((item) => item.name)).toEqual(["Alpha kettle"]);
    const second = (await (await list(alice.id, `${query}&page=2`)).json()) as Page;
    expect(second.items.map((item) => item.name)).toEqual(["Beta kettle"]);
    const past = (await (await list(alice.id, `${query}&page=3`)).json()) as Page;
    expect(past).toMatchObject({ items: [], total: 2, page: 3 });

    const descending = (await (await list(alice.id, "?order_by=-name&brand[in]=ACME")).json()) as Page;
    expect(descending.items.map((item) => item.name)).toEqual(["Gamma toaster", "Beta kettle", "Alpha kettle"]);
    const searched = (await (await list(alice.id, "?search=toast")).json()) as Page;
    expect(searched.items.map((item) => item.name)).toEqual(["Gamma toaster"]);

    // Same shape and content as the general list restricted to the owner.
    const token = alice.tokens.access_token;
    const general = await (await api(`/v1/products${query}&owner=me`, { headers: bearer(token) })).json();
    expect(await (await list(alice.id, query, token)).json()).toEqual(general);
  });

  it("refuses owner, unknown parameters, bad values and malformed user ids with 422", async () => {
    for (const query of ["?owner=me", "?colour=red", "?order_by=colour", "?size=101", "?page=0"]) {
      await expectProblem(await list(alice.id, query), 422, "VALIDATION_FAILED");
    }
    for (const id of ["abc", "0", "-1", "1.5", "me"]) {
      const problem = await expectProblem(await list(id), 422, "VALIDATION_FAILED");
      expect(problem.errors?.map((error) => error.pointer)).toEqual(["#/path/user_id"]);
    }
  });

  it("follows the owner's profile visibility; a hidden owner is 404 USER_NOT_FOUND", async () => {
    const [admin, stranger] = [await bootstrapAdmin(), await verifiedUser("stranger")];
    const expected: Record<Visibility, number[]> = {
      public: [200, 200, 200, 200],
      community: [404, 200, 200, 200],
      private: [404, 404, 200, 200],
    };
    for (const visibility of ["public", "community", "private"] as const) {
      const owner = await userWith(visibility);
      await create(owner.tokens.access_token, { name: `A ${visibility} radio` });
      const viewers = [undefined, stranger.tokens.access_token, owner.tokens.access_token, admin.tokens.access_token];
      const responses = await Promise.all(viewers.map((token) => list(owner.id, "", token)));
      expect(
        responses.map((r) => r.status),
        visibility,
      ).toEqual(expected[visibility]);
      for (const response of responses) {
        if (response.status === 404) {
          await expectProblem(response, 404, "USER_NOT_FOUND");
        } else {
          const page = (await response.json()) as Page;
          expect(page.items.map((item) => [item.name, item.owner_id])).toEqual([[`A ${visibility} radio`, owner.id]]);
        }
      }
    }
  });

  it("answers 404 for an unknown user, the system account and a deactivated account", async () => {
    const admin = await bootstrapAdmin();
    await expectProblem(await list(999_999_999), 404, "USER_NOT_FOUND");

    const system = await env.DB.prepare("SELECT id FROM users WHERE is_system = 1").first<{ id: number }>();
    await expectProblem(await list(system!.id), 404, "USER_NOT_FOUND");
    await expectProblem(await list(system!.id, "", admin.tokens.access_token), 404, "USER_NOT_FOUND");

    const gone = await verifiedUser("gone");
    await create(gone.tokens.access_token, { name: "Left behind" });
    await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(gone.id).run();
    const hidden = await list(gone.id, "", admin.tokens.access_token);
    expect(roundTrips(hidden)).toBe(1);
    await expectProblem(hidden, 404, "USER_NOT_FOUND");
  });

  it("is in the OpenAPI schema under Products, without the owner parameter", async () => {
    type Operation = { operationId: string; tags: string[]; parameters: { name: string; in: string }[] };
    const document = (await (await api("/v1/openapi.json")).json()) as { paths: Record<string, Record<string, Operation>> };
    const operation = document.paths["/v1/users/{user_id}/products"]?.get;
    expect(operation).toMatchObject({ operationId: "listUserProducts", tags: ["Products"] });
    const names = operation!.parameters.map((parameter) => parameter.name);
    expect(names).toEqual(expect.arrayContaining(["user_id", "name[ilike]", "order_by", "page", "size"]));
    expect(names).not.toContain("owner");
  });
});
