import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, lastEmail, me, postJson, registerUser, verifiedUser } from "../../support/accounts";
import { api, expectProblem, getSetCookie } from "../../support/http";
import { encodeJpeg } from "../../support/image-fixtures";
import { captureLogs } from "../../support/logs";
import { pathOf, scan, uploaded } from "../../support/media";
import { bootstrapAdmin } from "../../support/mfa";

let steel: number;

beforeAll(async () => {
  await env.DB.prepare("INSERT OR IGNORE INTO materials (name) VALUES ('Steel')").run();
  steel = (await env.DB.prepare("SELECT id FROM materials WHERE name = 'Steel'").first<{ id: number }>())!.id;
});

async function ownerWithProduct(prefix = "gone") {
  const user = await verifiedUser(prefix);
  const created = await postJson(
    "/v1/products",
    {
      name: `Kettle of ${user.username}`,
      description: "Written by the owner",
      bill_of_materials: [{ material_id: steel, quantity: 1 }],
      videos: [{ url: "https://video.example/watch?v=k" }],
      components: [{ name: "Heating element", amount_in_parent: 1, components: [{ name: "Coil", amount_in_parent: 2 }] }],
    },
    bearer(user.tokens.access_token),
  );
  expect(created.status).toBe(201);
  const product = (await created.json()) as { id: number; components: { id: number }[] };
  return { ...user, productId: product.id, componentId: product.components[0]!.id };
}

const deleteMe = (headers: Record<string, string>, body: object) =>
  api("/v1/users/me", { method: "DELETE", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) });

const adminDelete = (token: string, userId: number, body: object, query = "") =>
  api(`/v1/admin/users/${userId}${query}`, {
    method: "DELETE",
    headers: { ...bearer(token), "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("DELETE /v1/users/me", () => {
  it("erases the account, ends every session, and keeps the products public without the owner's name", async () => {
    const user = await ownerWithProduct();
    const viewer = await verifiedUser("viewer");
    const logs = captureLogs();
    const response = await deleteMe(bearer(user.tokens.access_token), { current_password: user.password });
    logs.restore();
    expect(response.status).toBe(204);
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

    for (const headers of [{}, bearer(viewer.tokens.access_token)]) {
      const product = await api(`/v1/products/${user.productId}`, { headers });
      expect(product.status).toBe(200);
      const body = (await product.json()) as Record<string, unknown>;
      expect(body).toMatchObject({
        name: `Kettle of ${user.username}`,
        description: "Written by the owner",
        owner_id: null,
        owner_username: null,
      });
      expect(body.bill_of_materials).toHaveLength(1);
      expect(body.videos).toHaveLength(1);
    }
    expect((await api(`/v1/components/${user.componentId}`)).status).toBe(200);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM users WHERE email = ? OR username = ?")
      .bind(user.email, user.username)
      .first();
    expect(rows).toEqual({ n: 0 });

    const notice = await lastEmail(user.email, "account was deleted");
    expect(notice.text).not.toMatch(/https?:\/\//);
    const audits = logs.entries().filter((entry) => entry.msg === "audit");
    expect(audits).toContainEqual(
      expect.objectContaining({ event: "account.deleted", user_id: user.id, by: "self", content: "anonymize" }),
    );
    expect(logs.lines.join("\n")).not.toContain(user.email);
  });

  it("frees the email address and the username for a new registration", async () => {
    const user = await ownerWithProduct();
    expect((await deleteMe(bearer(user.tokens.access_token), { current_password: user.password })).status).toBe(204);
    const again = await registerUser({ email: user.email, username: user.username, password: user.password });
    expect(again.id).not.toBe(user.id);
    // The new account does not inherit the old one's products.
    const mine = await api(`/v1/products/${user.productId}`);
    expect(await mine.json()).toMatchObject({ owner_id: null });
  });

  it("clears a browser's cookies and site data", async () => {
    const user = await verifiedUser("gone");
    const login = await postJson("/v1/auth/session/login", { username: user.email, password: user.password });
    const cookie = getSetCookie(login)
      .map((value) => value.split(";")[0])
      .join("; ");
    const response = await deleteMe({ cookie }, { current_password: user.password });
    expect(response.status).toBe(204);
    expect(getSetCookie(response).every((value) => value.includes("Max-Age=0"))).toBe(true);
    expect(getSetCookie(response)).toHaveLength(2);
    expect(response.headers.get("clear-site-data")).toBe('"cache", "cookies", "storage"');
  });

  it("refuses the last active superuser (409) and deletes nothing", async () => {
    const admin = await bootstrapAdmin();
    const response = await deleteMe(bearer(admin.tokens.access_token), {
      current_password: admin.password,
      mfa_code: admin.authenticator.next(),
    });
    await expectProblem(response, 409, "LAST_SUPERUSER");
    expect((await me(admin.tokens.access_token)).status).toBe(200);
  });
});

describe("DELETE /v1/admin/users/{user_id}", () => {
  it("anonymizes by default, after the acting superuser's step-up", async () => {
    const admin = await bootstrapAdmin();
    const user = await ownerWithProduct();
    await expectProblem(await adminDelete(admin.tokens.access_token, user.id, {}), 400, "CURRENT_PASSWORD_REQUIRED");
    await expectProblem(
      await adminDelete(admin.tokens.access_token, user.id, { current_password: admin.password }),
      400,
      "MFA_CODE_REQUIRED",
    );
    await expectProblem(
      await adminDelete(admin.tokens.access_token, user.id, {
        current_password: "wrong-password-here",
        mfa_code: admin.authenticator.peek(),
      }),
      403,
      "CURRENT_PASSWORD_INVALID",
    );
    const logs = captureLogs();
    const response = await adminDelete(admin.tokens.access_token, user.id, {
      current_password: admin.password,
      mfa_code: admin.authenticator.next(),
    });
    logs.restore();
    expect(response.status).toBe(204);
    expect((await me(user.tokens.access_token)).status).toBe(401);
    const product = await api(`/v1/products/${user.productId}`);
    expect(await product.json()).toMatchObject({ owner_id: null, owner_username: null });
    expect(logs.entries()).toContainEqual(
      expect.objectContaining({ msg: "audit", event: "account.deleted", user_id: user.id, actor_id: admin.id, by: "admin" }),
    );
    const notice = await lastEmail(user.email, "account was deleted");
    expect(notice.text).toContain("An administrator deleted");
  });

  it("with content=delete removes the products with their components, and the queue purges their media", { timeout: 30_000 }, async () => {
    const admin = await bootstrapAdmin();
    const user = await ownerWithProduct();
    const other = await ownerWithProduct("kept");
    const image = await uploaded(`/v1/components/${user.componentId}/images`, user.tokens.access_token, {
      bytes: encodeJpeg(8, 8, (x, y) => [x * 30, y * 30, 5]),
      name: "gone.jpg",
      type: "image/jpeg",
    });
    await scan("images", image.id);
    expect((await api(pathOf(image.image_url!))).status).toBe(200);
    const response = await adminDelete(
      admin.tokens.access_token,
      user.id,
      { current_password: admin.password, mfa_code: admin.recoveryCodes[0] },
      "?content=delete",
    );
    expect(response.status).toBe(204);
    expect((await api(`/v1/products/${user.productId}`)).status).toBe(404);
    expect((await api(`/v1/components/${user.componentId}`)).status).toBe(404);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM products WHERE owner_id = ?").bind(user.id).first();
    expect(left).toEqual({ n: 0 });
    expect((await api(`/v1/products/${other.productId}`)).status).toBe(200);
    // The purge runs on the media queue, a few seconds later.
    let status = 200;
    for (let i = 0; i < 40 && status === 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      status = (await api(pathOf(image.image_url!))).status;
    }
    expect(status).toBe(404);
  });

  it("refuses an unknown content value, an unknown user and the system account", async () => {
    const admin = await bootstrapAdmin();
    const user = await verifiedUser("gone");
    const stepUp = { current_password: admin.password, mfa_code: admin.recoveryCodes[1] };
    await expectProblem(await adminDelete(admin.tokens.access_token, user.id, stepUp, "?content=shred"), 422, "VALIDATION_FAILED");
    await expectProblem(
      await adminDelete(admin.tokens.access_token, 987654, { current_password: admin.password, mfa_code: admin.recoveryCodes[2] }),
      404,
      "USER_NOT_FOUND",
    );
    const system = await env.DB.prepare("SELECT id FROM users WHERE is_system = 1").first<{ id: number }>();
    await expectProblem(
      await adminDelete(admin.tokens.access_token, system!.id, { current_password: admin.password, mfa_code: admin.recoveryCodes[3] }),
      404,
      "USER_NOT_FOUND",
    );
    expect((await me(user.tokens.access_token)).status).toBe(200);
  });

  it("never deletes the last active superuser, even through the admin route", async () => {
    const admin = await bootstrapAdmin();
    const response = await adminDelete(admin.tokens.access_token, admin.id, {
      current_password: admin.password,
      mfa_code: admin.recoveryCodes[4],
    });
    await expectProblem(response, 409, "LAST_SUPERUSER");
  });

  it("is refused to an ordinary user (403), whatever the body", async () => {
    const user = await verifiedUser("plain");
    const victim = await verifiedUser("victim");
    await expectProblem(
      await adminDelete(user.tokens.access_token, victim.id, { current_password: user.password }),
      403,
      "SUPERUSER_REQUIRED",
    );
    expect((await me(victim.tokens.access_token)).status).toBe(200);
  });
});
