import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, verifiedUser } from "../../../support/accounts";
import { apiWithVars, expectProblem } from "../../../support/http";

// PLUGIN_RPI_CAM=false: a deployment without cameras. The plugin's routes are not mounted (the
// ordinary unknown-path 404, and no schema entry), and the core's deletions, which tell plugins
// through hooks and events, work without it. (`PLUGIN_RPI_CAM=false npx vitest run` runs the rest
// of the suite that way; the event consumer's side is in clean-up.test.ts.)

const OFF = { PLUGIN_RPI_CAM: "false" };
const off = (path: string, init?: RequestInit) => apiWithVars(OFF, path, init);

describe("with the camera plugin switched off", () => {
  it.each([
    ["GET", "/v1/plugins/rpi-cam/cameras"],
    ["DELETE", "/v1/plugins/rpi-cam/cameras/3f2b8c1e-0000-4000-8000-000000000000"],
    ["POST", "/v1/plugins/rpi-cam/pairing/register"],
    ["GET", "/v1/plugins/rpi-cam/pairing/poll"],
    ["POST", "/v1/plugins/rpi-cam/device/cameras/3f2b8c1e-0000-4000-8000-000000000000/image-upload"],
    ["GET", "/v1/plugins/rpi-cam/ws/connect"],
  ])("%s %s answers the ordinary 404, before any sign-in", async (method, path) => {
    const body = await expectProblem(await off(path, { method }), 404, "NOT_FOUND");
    expect(body.detail).toBe("No resource exists at this path.");
  });

  it("leaves the plugin's routes and its tag out of the OpenAPI document", async () => {
    const response = await off("/v1/openapi.json");
    expect(response.status).toBe(200);
    const document = (await response.json()) as { paths: Record<string, unknown>; tags: { name: string }[] };
    expect(Object.keys(document.paths).filter((path) => path.includes("rpi-cam"))).toEqual([]);
    expect(document.tags.map((tag) => tag.name)).not.toContain("Cameras");
    expect(Object.keys(document.paths)).toContain("/v1/products/{id}");
  });

  it("is on when unset, and a value other than true or false is a configuration error", async () => {
    expect((await apiWithVars({}, "/v1/plugins/rpi-cam/cameras")).status).toBe(401);
    await expectProblem(await apiWithVars({ PLUGIN_RPI_CAM: "maybe" }, "/v1/units"), 500, "INTERNAL_ERROR");
  });

  it("deletes products and accounts as ever", async () => {
    const user = await verifiedUser("camoff");
    const headers = { ...bearer(user.tokens.access_token), "content-type": "application/json" };
    const created = await off("/v1/products", {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "Radio", components: [{ name: "Tuner", amount_in_parent: 1 }] }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { id } = (await created.json()) as { id: number };
    expect((await off(`/v1/products/${id}`, { method: "DELETE", headers: bearer(user.tokens.access_token) })).status).toBe(204);
    expect((await off(`/v1/products/${id}`)).status).toBe(404);

    const deleted = await off("/v1/users/me", { method: "DELETE", headers, body: JSON.stringify({ current_password: user.password }) });
    expect(deleted.status, await deleted.clone().text()).toBe(204);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM users WHERE id = ?").bind(user.id).first<{ n: number }>()).toEqual({ n: 0 });
  });
});
