import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, patchMe, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { bootstrapAdmin } from "../../support/mfa";

// Superuser moderation (spec, Roles and permissions): a superuser with TOTP corrects and deletes
// anyone's records and their materials, never adds to them, and every such action is audited.

let steel: number;
let glass: number;

beforeAll(async () => {
  await env.DB.prepare("INSERT OR IGNORE INTO materials (name) VALUES ('Steel'), ('Glass')").run();
  const rows = await env.DB.prepare("SELECT id, name FROM materials").all<{ id: number; name: string }>();
  steel = rows.results.find((row) => row.name === "Steel")!.id;
  glass = rows.results.find((row) => row.name === "Glass")!.id;
});

async function contributorProduct() {
  const owner = await verifiedUser("owner");
  const created = await postJson(
    "/v1/products",
    { name: "Toaster", bill_of_materials: [{ material_id: steel, quantity: 2 }], components: [{ name: "Spring", amount_in_parent: 2 }] },
    bearer(owner.tokens.access_token),
  );
  expect(created.status).toBe(201);
  const body = (await created.json()) as { id: number; version: number; components: { id: number }[] };
  return { owner, id: body.id, componentId: body.components[0]!.id };
}

const send = (method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) =>
  api(path, {
    method,
    headers: { ...bearer(token), ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe("superuser moderation", () => {
  it("corrects someone's product and component details, audited with actor and owner", async () => {
    const admin = await bootstrapAdmin();
    const { owner, id, componentId } = await contributorProduct();
    const logs = captureLogs();
    const patched = await send(
      "PATCH",
      `/v1/products/${id}`,
      admin.tokens.access_token,
      { name: "Toaster (corrected)" },
      { "if-match": '"1"' },
    );
    const component = await send(
      "PATCH",
      `/v1/components/${componentId}`,
      admin.tokens.access_token,
      { name: "Spring steel" },
      { "if-match": '"1"' },
    );
    logs.restore();
    expect(patched.status, await patched.clone().text()).toBe(200);
    expect(await patched.json()).toMatchObject({ name: "Toaster (corrected)", owner_id: owner.id, version: 2 });
    expect(component.status).toBe(200);
    const audits = logs.entries().filter((entry) => entry.event === "moderation.record.updated");
    expect(audits).toEqual([
      expect.objectContaining({ actor_id: admin.id, owner_id: owner.id, record_kind: "product", record_id: id }),
      expect.objectContaining({ actor_id: admin.id, owner_id: owner.id, record_kind: "component", record_id: componentId }),
    ]);
  });

  it("deletes someone's component, bill-of-materials entries and product, each audited", async () => {
    const admin = await bootstrapAdmin();
    const { owner, id, componentId } = await contributorProduct();
    const logs = captureLogs();
    expect((await send("DELETE", `/v1/products/${id}/materials/${steel}`, admin.tokens.access_token)).status).toBe(204);
    expect((await send("DELETE", `/v1/components/${componentId}`, admin.tokens.access_token)).status).toBe(204);
    expect((await send("DELETE", `/v1/products/${id}`, admin.tokens.access_token)).status).toBe(204);
    logs.restore();
    expect((await api(`/v1/products/${id}`)).status).toBe(404);
    const events = logs
      .entries()
      .filter((entry) => String(entry.event).startsWith("moderation."))
      .map((entry) => [entry.event, entry.owner_id]);
    expect(events).toEqual([
      ["moderation.bom.changed", owner.id],
      ["moderation.record.deleted", owner.id],
      ["moderation.record.deleted", owner.id],
    ]);
  });

  it("never adds content to someone's records: components and materials are 404", async () => {
    const admin = await bootstrapAdmin();
    const { id, componentId } = await contributorProduct();
    const token = admin.tokens.access_token;
    await expectProblem(
      await send("POST", `/v1/products/${id}/components`, token, { name: "Extra", amount_in_parent: 1 }),
      404,
      "NOT_FOUND",
    );
    await expectProblem(
      await send("POST", `/v1/components/${componentId}/components`, token, { name: "Extra", amount_in_parent: 1 }),
      404,
      "NOT_FOUND",
    );
    await expectProblem(await send("POST", `/v1/products/${id}/materials`, token, [{ material_id: glass, quantity: 1 }]), 404, "NOT_FOUND");
    await expectProblem(await send("POST", `/v1/products/${id}/materials/${glass}`, token, { quantity: 1 }), 404, "NOT_FOUND");
    const product = (await (await api(`/v1/products/${id}`)).json()) as { components: unknown[]; bill_of_materials: unknown[] };
    expect(product.components).toHaveLength(1);
    expect(product.bill_of_materials).toHaveLength(1);
  });

  it("an owner's own edits are not moderation", async () => {
    const { owner, id } = await contributorProduct();
    const logs = captureLogs();
    expect(
      (await send("PATCH", `/v1/products/${id}`, owner.tokens.access_token, { name: "My toaster" }, { "if-match": '"1"' })).status,
    ).toBe(200);
    logs.restore();
    expect(logs.entries().filter((entry) => String(entry.event).startsWith("moderation."))).toEqual([]);
  });

  it("another contributor still gets 404 for every write", async () => {
    const { id } = await contributorProduct();
    const stranger = await verifiedUser("stranger");
    await expectProblem(
      await send("PATCH", `/v1/products/${id}`, stranger.tokens.access_token, { name: "Mine now" }, { "if-match": '"1"' }),
      404,
      "NOT_FOUND",
    );
    await expectProblem(await send("DELETE", `/v1/products/${id}`, stranger.tokens.access_token), 404, "NOT_FOUND");
  });

  it("sees the owner of a record whose owner's profile is private", async () => {
    const admin = await bootstrapAdmin();
    const { owner, id } = await contributorProduct();
    expect((await patchMe(owner.tokens.access_token, { preferences: { profile_visibility: "private" } })).status).toBe(200);
    expect(await (await api(`/v1/products/${id}`)).json()).toMatchObject({ owner_id: null });
    expect(await (await api(`/v1/products/${id}`, { headers: bearer(admin.tokens.access_token) })).json()).toMatchObject({
      owner_id: owner.id,
    });
  });
});
