import { exports } from "cloudflare:workers";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  createRelabClient,
  ifMatch,
  type Problem,
  type QualityCheckCode,
  type RelabClient,
  recordsThatNeedWork,
} from "../../clients/typescript";
import { verifiedUser } from "../support/accounts";
import { parseCsv } from "../support/csv";
import { ORIGIN } from "../support/http";

// The committed client (clients/typescript) against the Worker under test: its requests go
// through the real fetch handler, exactly as over the network.
const transport = (request: Request) => exports.default.fetch(request);

async function signedInClient(): Promise<{ client: RelabClient; brand: string }> {
  const user = await verifiedUser("client");
  const anonymous = createRelabClient({ baseUrl: ORIGIN, fetch: transport });
  const { data, error, response } = await anonymous.POST("/v1/auth/bearer/login", {
    body: { username: user.email, password: user.password },
  });
  expect(response.status, JSON.stringify(error)).toBe(200);
  if (!data || !("access_token" in data)) throw new Error("expected a token pair");
  expectTypeOf(data.access_token).toEqualTypeOf<string>();
  return {
    client: createRelabClient({ baseUrl: ORIGIN, fetch: transport, accessToken: data.access_token }),
    // Unique per run: the list and export filters below must find this user's records only.
    brand: `brand-${user.username.toLowerCase().replace(/_/g, "-")}`,
  };
}

describe("the typed TypeScript client", () => {
  it("signs in, creates with an Idempotency-Key (a retry replays), and PATCHes with If-Match", async () => {
    const { client, brand } = await signedInClient();
    const key = crypto.randomUUID();
    const body = { name: "Coffee grinder", brand, components: [{ name: "Motor", amount_in_parent: 1 }] };
    const created = await client.POST("/v1/products", { params: { header: { "Idempotency-Key": key } }, body });
    expect(created.response.status, JSON.stringify(created.error)).toBe(201);
    const product = created.data!;
    expect(product).toMatchObject({ name: "Coffee grinder", brand, version: 1 });
    expect(product.components).toHaveLength(1);

    const retried = await client.POST("/v1/products", { params: { header: { "Idempotency-Key": key } }, body });
    expect(retried.response.status).toBe(201);
    expect(retried.response.headers.get("idempotent-replayed")).toBe("true");
    expect(retried.data!.id).toBe(product.id);

    const updated = await client.PATCH("/v1/products/{id}", {
      params: { path: { id: product.id }, header: { "if-match": ifMatch(product.version) } },
      body: { weight_g: 1450 },
    });
    expect(updated.response.status, JSON.stringify(updated.error)).toBe(200);
    expect(updated.data).toMatchObject({ id: product.id, weight_g: 1450, version: product.version + 1 });

    // The same version again is stale: the error is a typed Problem Details.
    const stale = await client.PATCH("/v1/products/{id}", {
      params: { path: { id: product.id }, header: { "if-match": ifMatch(product.version) } },
      body: { weight_g: 1500 },
    });
    expect(stale.response.status).toBe(412);
    expect(stale.data).toBeUndefined();
    expectTypeOf(stale.error!).toEqualTypeOf<Problem>();
    expect(stale.error).toMatchObject({ status: 412, code: "VERSION_MISMATCH" });
  });

  it("lists with filters and exports the same selection as CSV", async () => {
    const { client, brand } = await signedInClient();
    for (const name of ["Coffee grinder", "Toaster", "Coffee maker"]) {
      const { response } = await client.POST("/v1/products", { body: { name, brand } });
      expect(response.status).toBe(201);
    }

    const listed = await client.GET("/v1/products", {
      params: { query: { search: "coffee", "brand[in]": brand, order_by: "name", size: 10 } },
    });
    expect(listed.response.status, JSON.stringify(listed.error)).toBe(200);
    expect(listed.data!.items.map((item) => item.name)).toEqual(["Coffee grinder", "Coffee maker"]);
    expect(listed.data!.total).toBe(2);

    const exported = await client.GET("/v1/products/export", {
      params: { query: { "brand[in]": brand, order_by: "name" } },
      parseAs: "text",
    });
    expect(exported.response.status).toBe(200);
    expect(exported.response.headers.get("content-type")).toMatch(/^text\/csv/);
    const [header, ...rows] = parseCsv(exported.data!);
    const name = header!.indexOf("name");
    expect(name).toBeGreaterThanOrEqual(0);
    expect(rows.map((row) => row[name])).toEqual(["Coffee grinder", "Coffee maker", "Toaster"]);
  });

  it("finds your records that need work, lowest score first, with what fails", async () => {
    const { client, brand } = await signedInClient();
    const make = async (body: {
      name: string;
      weight_g?: number;
      components?: { name: string; amount_in_parent: number; weight_g: number }[];
    }) => {
      const { data, response } = await client.POST("/v1/products", { body: { brand, ...body } });
      expect(response.status).toBe(201);
      return data!.id;
    };
    const bare = await make({ name: "Bare lamp" });
    const unbalanced = await make({
      name: "Heavy parts",
      weight_g: 100,
      components: [{ name: "Lump", amount_in_parent: 1, weight_g: 300 }],
    });
    const found = await recordsThatNeedWork(client);
    expect(found.map((record) => record.id)).toEqual([bare, unbalanced]);
    expect(found[0]!.failing.map((check) => check.code)).toEqual([
      "has_product_type",
      "has_weight",
      "has_dimensions",
      "has_image",
      "has_breakdown",
      "has_circularity_notes",
    ]);
    expectTypeOf(found[0]!.failing[0]!.code).toEqualTypeOf<QualityCheckCode>();
    const massOff = await recordsThatNeedWork(client, { failing: ["components_mass_balance"] });
    expect(massOff).toMatchObject([{ id: unbalanced, quality_score: 0.286, lowest: [{ name: "Lump" }, { name: "Heavy parts" }] }]);
    expect(massOff[0]!.failing.find((check) => check.code === "components_mass_balance")!.detail).toContain(
      "300 g against a weight of 100 g",
    );
  });

  it("refuses a base URL that already ends in /v1, since the paths carry it", () => {
    expect(() => createRelabClient({ baseUrl: `${ORIGIN}/v1/`, fetch: transport })).toThrow(TypeError);
  });
});
