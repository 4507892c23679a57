import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { expectProblem } from "../../support/http";

const keyed = (token: string, key: string) => ({ ...bearer(token), "idempotency-key": key });

async function countNamed(name: string): Promise<number> {
  return (await env.DB.prepare("SELECT count(*) AS n FROM products WHERE name = ?").bind(name).first<{ n: number }>())!.n;
}

describe("Idempotency-Key on the create routes", () => {
  it("replays the first answer to a retry with the same key and body, creating one product", async () => {
    const user = await verifiedUser("retry");
    const name = `Retry ${crypto.randomUUID().slice(0, 8)}`;
    const key = crypto.randomUUID();
    const first = await postJson("/v1/products", { name, components: [{ name: "Part", amount_in_parent: 1 }] }, keyed(user.tokens.access_token, key));
    const second = await postJson("/v1/products", { name, components: [{ name: "Part", amount_in_parent: 1 }] }, keyed(user.tokens.access_token, key));
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.headers.get("location")).toBe(first.headers.get("location"));
    expect(await second.json()).toEqual(await first.json());
    expect(await countNamed(name)).toBe(1);
  });

  it("refuses the same key with another body or another parent with 422", async () => {
    const user = await verifiedUser("retry");
    const token = user.tokens.access_token;
    const key = crypto.randomUUID();
    expect((await postJson("/v1/products", { name: "Original" }, keyed(token, key))).status).toBe(201);
    await expectProblem(await postJson("/v1/products", { name: "Changed" }, keyed(token, key)), 422, "IDEMPOTENCY_KEY_REUSED");

    const [a, b] = await Promise.all([
      postJson("/v1/products", { name: "Parent A" }, bearer(token)).then((r) => r.json() as Promise<{ id: number }>),
      postJson("/v1/products", { name: "Parent B" }, bearer(token)).then((r) => r.json() as Promise<{ id: number }>),
    ]);
    const componentKey = crypto.randomUUID();
    expect((await postJson(`/v1/products/${a.id}/components`, { name: "Hinge", amount_in_parent: 1 }, keyed(token, componentKey))).status).toBe(201);
    await expectProblem(
      await postJson(`/v1/products/${b.id}/components`, { name: "Hinge", amount_in_parent: 1 }, keyed(token, componentKey)),
      422,
      "IDEMPOTENCY_KEY_REUSED",
    );
  });

  it("creates one record when first requests with one key arrive together", async () => {
    const user = await verifiedUser("retry");
    const name = `Race ${crypto.randomUUID().slice(0, 8)}`;
    const key = crypto.randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => postJson("/v1/products", { name, components: [{ name: "Cog", amount_in_parent: 2 }] }, keyed(user.tokens.access_token, key))),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    expect(await countNamed(name)).toBe(1);
    for (const response of responses.filter((r) => r.status === 409)) {
      expect(response.headers.get("retry-after")).toBe("1");
    }
  });

  it("refuses a malformed key with 422, and fails closed with 503 when the key store is unreachable", async () => {
    const user = await verifiedUser("retry");
    const problem = await expectProblem(await postJson("/v1/products", { name: "Spaced" }, keyed(user.tokens.access_token, "has space")), 422, "VALIDATION_FAILED");
    expect(problem.errors?.[0]?.pointer).toBe("#/header/Idempotency-Key");

    const name = `Offline ${crypto.randomUUID().slice(0, 8)}`;
    await env.DB.exec("ALTER TABLE idempotency_keys RENAME TO idempotency_keys_offline");
    try {
      await expectProblem(await postJson("/v1/products", { name }, keyed(user.tokens.access_token, crypto.randomUUID())), 503, "IDEMPOTENCY_STORE_UNAVAILABLE");
    } finally {
      await env.DB.exec("ALTER TABLE idempotency_keys_offline RENAME TO idempotency_keys");
    }
    expect(await countNamed(name)).toBe(0);
  });
});
