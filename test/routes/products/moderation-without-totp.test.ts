import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, bearerLogin, patchMe, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem } from "../../support/http";

// A superuser without TOTP is an ordinary user outside /admin (spec, Login and two-step
// verification, item 3). This file never enrols the bootstrap superuser.

describe("a superuser without TOTP", () => {
  it("cannot correct or delete someone's product, nor see a private owner", async () => {
    const superuser = await bearerLogin({ email: env.BOOTSTRAP_SUPERUSER_EMAIL, password: env.BOOTSTRAP_SUPERUSER_PASSWORD });
    const owner = await verifiedUser("owner");
    const created = await postJson("/v1/products", { name: "Radio" }, bearer(owner.tokens.access_token));
    const { id } = (await created.json()) as { id: number };
    expect((await patchMe(owner.tokens.access_token, { preferences: { profile_visibility: "private" } })).status).toBe(200);
    const patch = await api(`/v1/products/${id}`, {
      method: "PATCH",
      headers: { ...bearer(superuser.access_token), "content-type": "application/json", "if-match": '"1"' },
      body: JSON.stringify({ name: "Radio (moderated)" }),
    });
    await expectProblem(patch, 404, "NOT_FOUND");
    await expectProblem(await api(`/v1/products/${id}`, { method: "DELETE", headers: bearer(superuser.access_token) }), 404, "NOT_FOUND");
    const read = await api(`/v1/products/${id}`, { headers: bearer(superuser.access_token) });
    expect(await read.json()).toMatchObject({ name: "Radio", owner_id: null, owner_username: null });
    await expectProblem(await api("/v1/admin/users", { headers: bearer(superuser.access_token) }), 403, "ADMIN_TOTP_REQUIRED");
  });
});
