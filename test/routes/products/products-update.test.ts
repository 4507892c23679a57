import { describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";

type Record = { id: number; version: number; name: string; brand: string | null; components: { id: number; version: number }[] };

async function newProduct(
  token: string,
  body: object = { name: "Desk lamp", components: [{ name: "Bulb", amount_in_parent: 1 }] },
): Promise<Record> {
  const response = await postJson("/v1/products", body, bearer(token));
  expect(response.status).toBe(201);
  return (await response.json()) as Record;
}

function patch(path: string, token: string, body: unknown, ifMatch?: string): Promise<Response> {
  const headers: { [name: string]: string } = { ...bearer(token), "content-type": "application/json" };
  if (ifMatch !== undefined) headers["if-match"] = ifMatch;
  return api(path, { method: "PATCH", headers, body: JSON.stringify(body) });
}

describe("PATCH with If-Match", () => {
  it("changes the fields, bumps version by one, in one read and one conditional update", async () => {
    const user = await verifiedUser("editor");
    const product = await newProduct(user.tokens.access_token);
    const response = await patch(
      `/v1/products/${product.id}`,
      user.tokens.access_token,
      { name: "Floor lamp", brand: "IKEA" },
      `"${product.version}"`,
    );
    expect(response.status, await response.clone().text()).toBe(200);
    // The token check, the read, the conditional update.
    expect(roundTrips(response)).toBe(3);
    const body = (await response.json()) as Record;
    expect(body).toMatchObject({ name: "Floor lamp", brand: "ikea", version: product.version + 1 });
    expect(body.components).toHaveLength(1);
    expect(await (await api(`/v1/products/${product.id}`)).json()).toMatchObject({ name: "Floor lamp", version: product.version + 1 });
  });

  it("answers 428 without If-Match and 412 for anything but one quoted, current version", async () => {
    const user = await verifiedUser("editor");
    const product = await newProduct(user.tokens.access_token);
    const path = `/v1/products/${product.id}`;
    await expectProblem(await patch(path, user.tokens.access_token, { name: "Lamp two" }), 428, "IF_MATCH_REQUIRED");
    for (const header of ["*", 'W/"1"', '"1", "1"', "1", '"abc"', '""']) {
      await expectProblem(await patch(path, user.tokens.access_token, { name: "Lamp two" }, header), 412, "IF_MATCH_INVALID");
    }
    await expectProblem(await patch(path, user.tokens.access_token, { name: "Lamp two" }, '"7"'), 412, "VERSION_MISMATCH");
    // The ETag of a read is not a version.
    const etag = (await api(path)).headers.get("etag")!;
    await expectProblem(await patch(path, user.tokens.access_token, { name: "Lamp two" }, etag), 412, "IF_MATCH_INVALID");
  });

  it("lets a PATCH that changes nothing succeed whatever version it names, without a new version", async () => {
    const user = await verifiedUser("editor");
    const product = await newProduct(user.tokens.access_token, { name: "Kettle", brand: "bosch" });
    const response = await patch(`/v1/products/${product.id}`, user.tokens.access_token, { name: "Kettle", brand: "BOSCH" }, '"42"');
    expect(response.status).toBe(200);
    expect(((await response.json()) as Record).version).toBe(product.version);
  });

  it("lets exactly one of two concurrent PATCHes naming the same version win", async () => {
    const user = await verifiedUser("editor");
    const product = await newProduct(user.tokens.access_token);
    const [first, second] = await Promise.all(
      ["Lamp A", "Lamp B"].map((name) => patch(`/v1/products/${product.id}`, user.tokens.access_token, { name }, `"${product.version}"`)),
    );
    expect([first!.status, second!.status].sort()).toEqual([200, 412]);
    const final = (await (await api(`/v1/products/${product.id}`)).json()) as Record;
    expect(final.version).toBe(product.version + 1);
  });

  it("updates components through their own route, and leaves the product's version alone when components change", async () => {
    const user = await verifiedUser("editor");
    const product = await newProduct(user.tokens.access_token);
    const bulb = product.components[0]!;
    const response = await patch(`/v1/components/${bulb.id}`, user.tokens.access_token, { amount_in_parent: 3 }, `"${bulb.version}"`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ amount_in_parent: 3, version: bulb.version + 1 });
    await postJson(`/v1/products/${product.id}/components`, { name: "Shade", amount_in_parent: 1 }, bearer(user.tokens.access_token));
    expect(((await (await api(`/v1/products/${product.id}`)).json()) as Record).version).toBe(product.version);
    // Kinds do not mix.
    await expectProblem(await patch(`/v1/products/${bulb.id}`, user.tokens.access_token, { name: "Bulb two" }, '"1"'), 404, "NOT_FOUND");
    await expectProblem(
      await patch(`/v1/components/${product.id}`, user.tokens.access_token, { name: "Lamp two" }, '"1"'),
      404,
      "NOT_FOUND",
    );
  });

  it("answers 404 for someone else's record and 422 for an unknown product type or read-only members", async () => {
    const [alice, bob] = [await verifiedUser("alice"), await verifiedUser("bob")];
    const product = await newProduct(alice.tokens.access_token);
    await expectProblem(await patch(`/v1/products/${product.id}`, bob.tokens.access_token, { name: "Mine now" }, '"1"'), 404, "NOT_FOUND");
    const unknownType = await expectProblem(
      await patch(`/v1/products/${product.id}`, alice.tokens.access_token, { product_type_id: 999_999 }, '"1"'),
      422,
      "VALIDATION_FAILED",
    );
    expect(unknownType.errors).toEqual([{ pointer: "/product_type_id", detail: "No product type has this id." }]);
    await expectProblem(
      await patch(`/v1/products/${product.id}`, alice.tokens.access_token, { version: 9 }, '"1"'),
      422,
      "VALIDATION_FAILED",
    );
    await expectProblem(
      await patch(`/v1/products/${product.id}`, alice.tokens.access_token, { amount_in_parent: 2 }, '"1"'),
      422,
      "VALIDATION_FAILED",
    );
  });
});
