import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem, roundTrips } from "../../support/http";
import { captureLogs } from "../../support/logs";

const keyed = (token: string, key: string) => ({ ...bearer(token), "idempotency-key": key });

async function countNamed(name: string, parentId?: number): Promise<number> {
  const query =
    parentId === undefined
      ? env.DB.prepare("SELECT count(*) AS n FROM products WHERE name = ?").bind(name)
      : env.DB.prepare("SELECT count(*) AS n FROM products WHERE name = ? AND parent_id = ?").bind(name, parentId);
  return (await query.first<{ n: number }>())!.n;
}

describe("Idempotency-Key on the create routes", () => {
  it("replays the first answer to a retry with the same key and body, creating one product", async () => {
    const user = await verifiedUser("retry");
    const name = `Retry ${crypto.randomUUID().slice(0, 8)}`;
    const key = crypto.randomUUID();
    const first = await postJson(
      "/v1/products",
      { name, components: [{ name: "Part", amount_in_parent: 1 }] },
      keyed(user.tokens.access_token, key),
    );
    const second = await postJson(
      "/v1/products",
      { name, components: [{ name: "Part", amount_in_parent: 1 }] },
      keyed(user.tokens.access_token, key),
    );
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.headers.get("location")).toBe(first.headers.get("location"));
    expect(await second.json()).toEqual(await first.json());
    expect(await countNamed(name)).toBe(1);
  });

  it("refuses the same key on the same path with another body with 422", async () => {
    const user = await verifiedUser("retry");
    const token = user.tokens.access_token;
    const key = crypto.randomUUID();
    expect((await postJson("/v1/products", { name: "Original" }, keyed(token, key))).status).toBe(201);
    await expectProblem(await postJson("/v1/products", { name: "Changed" }, keyed(token, key)), 422, "IDEMPOTENCY_KEY_REUSED");

    const parent = (await (await postJson("/v1/products", { name: "Parent" }, bearer(token))).json()) as { id: number };
    const componentKey = crypto.randomUUID();
    const path = `/v1/products/${parent.id}/components`;
    expect((await postJson(path, { name: "Hinge", amount_in_parent: 1 }, keyed(token, componentKey))).status).toBe(201);
    await expectProblem(
      await postJson(path, { name: "Hinge", amount_in_parent: 2 }, keyed(token, componentKey)),
      422,
      "IDEMPOTENCY_KEY_REUSED",
    );
    expect(await countNamed("Hinge", parent.id)).toBe(1);
  });

  it("treats the same key under another parent, or on another create route, as another key", async () => {
    const user = await verifiedUser("retry");
    const token = user.tokens.access_token;
    const [a, b] = await Promise.all([
      postJson("/v1/products", { name: "Parent A" }, bearer(token)).then((r) => r.json() as Promise<{ id: number }>),
      postJson("/v1/products", { name: "Parent B" }, bearer(token)).then((r) => r.json() as Promise<{ id: number }>),
    ]);
    const key = crypto.randomUUID();
    const body = { name: "Hinge", amount_in_parent: 1 };
    const underA = await postJson(`/v1/products/${a.id}/components`, body, keyed(token, key));
    const underB = await postJson(`/v1/products/${b.id}/components`, body, keyed(token, key));
    expect([underA.status, underB.status]).toEqual([201, 201]);
    expect(underB.headers.get("idempotent-replayed")).toBeNull();
    const [componentA, componentB] = (await Promise.all([underA.json(), underB.json()])) as { id: number; parent_id: number }[];
    expect(componentB!.id).not.toBe(componentA!.id);
    expect([componentA!.parent_id, componentB!.parent_id]).toEqual([a.id, b.id]);

    // The same key on the two other create routes: two more records.
    const sub = await postJson(`/v1/components/${componentA!.id}/components`, body, keyed(token, key));
    expect(sub.status).toBe(201);
    expect(sub.headers.get("idempotent-replayed")).toBeNull();
    const product = await postJson("/v1/products", { name: "Hinge" }, keyed(token, key));
    expect(product.status).toBe(201);
    expect(product.headers.get("idempotent-replayed")).toBeNull();

    // Each is replayed on its own path.
    const again = await postJson(`/v1/products/${b.id}/components`, body, keyed(token, key));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(((await again.json()) as { id: number }).id).toBe(componentB!.id);
    expect(await countNamed("Hinge", a.id)).toBe(1);
    expect(await countNamed("Hinge", b.id)).toBe(1);
  });

  it("creates one record when first requests with one key arrive together", async () => {
    const user = await verifiedUser("retry");
    const name = `Race ${crypto.randomUUID().slice(0, 8)}`;
    const key = crypto.randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 5 }, () =>
        postJson("/v1/products", { name, components: [{ name: "Cog", amount_in_parent: 2 }] }, keyed(user.tokens.access_token, key)),
      ),
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
    const problem = await expectProblem(
      await postJson("/v1/products", { name: "Spaced" }, keyed(user.tokens.access_token, "has space")),
      422,
      "VALIDATION_FAILED",
    );
    expect(problem.errors?.[0]?.pointer).toBe("#/header/Idempotency-Key");

    const name = `Offline ${crypto.randomUUID().slice(0, 8)}`;
    await env.DB.exec("ALTER TABLE idempotency_keys RENAME TO idempotency_keys_offline");
    try {
      await expectProblem(
        await postJson("/v1/products", { name }, keyed(user.tokens.access_token, crypto.randomUUID())),
        503,
        "IDEMPOTENCY_STORE_UNAVAILABLE",
      );
    } finally {
      await env.DB.exec("ALTER TABLE idempotency_keys_offline RENAME TO idempotency_keys");
    }
    expect(await countNamed(name)).toBe(0);
  });
});

/**
 * Stands in for a crash between a create's commit and its answer: from here on every attempt to
 * store a response fails in D1 itself (a trigger on the real table, installed only by this test
 * file, whose storage no other file sees), while the create's own batch goes through.
 */
async function withResponsesUnstorable<T>(work: () => Promise<T>): Promise<T> {
  await env.DB.prepare(
    `CREATE TRIGGER idempotency_store_fails BEFORE UPDATE OF response_body ON idempotency_keys
     WHEN NEW.response_body IS NOT NULL BEGIN SELECT RAISE(ABORT, 'simulated crash before the answer was stored'); END`,
  ).run();
  const logs = captureLogs();
  try {
    return await work();
  } finally {
    logs.restore();
    await env.DB.prepare("DROP TRIGGER idempotency_store_fails").run();
  }
}

describe("a keyed create cut off between its commit and its answer", () => {
  async function setup() {
    const user = await verifiedUser("crash");
    const token = user.tokens.access_token;
    const tag = crypto.randomUUID().slice(0, 8);
    const material = await env.DB.prepare("INSERT INTO materials (name) VALUES (?) RETURNING id")
      .bind(`Steel ${tag}`)
      .first<{ id: number }>();
    const parent = (await (await postJson("/v1/products", { name: `Parent ${tag}` }, bearer(token))).json()) as { id: number };
    const component = (await (
      await postJson(`/v1/products/${parent.id}/components`, { name: `Holder ${tag}`, amount_in_parent: 1 }, bearer(token))
    ).json()) as { id: number };
    const record = (name: string) => ({
      name,
      brand: "Acme",
      weight_g: 120.5,
      bill_of_materials: [{ material_id: material!.id, quantity: 0.25, unit: "kg" }],
      components: [
        { name: `${name} part one`, amount_in_parent: 1 },
        { name: `${name} part two`, amount_in_parent: 3, components: [{ name: `${name} screw`, amount_in_parent: 4 }] },
      ],
    });
    return { token, tag, parent, component, record };
  }

  it.each(["/v1/products", "/v1/products/{parent}/components", "/v1/components/{component}/components"])(
    "POST %s: the retry replays the original answer at once, and there is one record",
    async (route) => {
      const { token, tag, parent, component, record } = await setup();
      const path = route.replace("{parent}", String(parent.id)).replace("{component}", String(component.id));
      const name = `Crash ${tag}`;
      const body =
        route === "/v1/products"
          ? { ...record(name), videos: [{ url: "https://example.org/v.mp4", title: "Teardown" }] }
          : { ...record(name), amount_in_parent: 2 };
      const key = crypto.randomUUID();

      const [first, retry] = await withResponsesUnstorable(async () => {
        const first = await postJson(path, body, keyed(token, key));
        const retry = await postJson(path, body, keyed(token, key));
        return [first, retry];
      });
      // The client that lost the first answer gets it on the retry, not 409 until a lease ends.
      expect(first.status).toBe(201);
      expect(retry.status).toBe(201);
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(retry.headers.get("location")).toBe(first.headers.get("location"));
      expect(retry.headers.get("content-type")).toBe(first.headers.get("content-type"));
      expect(await retry.json()).toEqual(await first.json());
      expect(await countNamed(name)).toBe(1);
      expect(await countNamed(`${name} screw`)).toBe(1);
      // Token check, claim, the create's batch (which commits the key too) and the failed store.
      expect(roundTrips(first)).toBe(4);
      // Token check, claim (which finds the committed key), the record's detail.
      expect(roundTrips(retry)).toBe(3);

      // Once the store works again, retries still replay (rebuilt from the record) and never create.
      const later = await postJson(path, body, keyed(token, key));
      expect(later.status).toBe(201);
      expect(later.headers.get("idempotent-replayed")).toBe("true");
      expect(await countNamed(name)).toBe(1);
    },
  );

  it("answers 410 when the record the first request made has been deleted since", async () => {
    const { token, tag, record } = await setup();
    const name = `Gone ${tag}`;
    const body = record(name);
    const key = crypto.randomUUID();
    const first = await withResponsesUnstorable(() => postJson("/v1/products", body, keyed(token, key)));
    expect(first.status).toBe(201);
    const { id } = (await first.json()) as { id: number };
    expect((await api(`/v1/products/${id}`, { method: "DELETE", headers: bearer(token) })).status).toBe(204);

    await expectProblem(await postJson("/v1/products", body, keyed(token, key)), 410, "IDEMPOTENCY_RECORD_GONE");
    expect(await countNamed(name)).toBe(0);
  });

  it("a keyed create costs no more round trips than before, and a refused one gives its key up", async () => {
    const { token, tag, record } = await setup();
    const body = record(`Plain ${tag}`);
    const key = crypto.randomUUID();
    const created = await postJson("/v1/products", body, keyed(token, key));
    expect(created.status).toBe(201);
    // Token check, claim, the create's batch, the stored answer.
    expect(roundTrips(created)).toBe(4);
    const replay = await postJson("/v1/products", body, keyed(token, key));
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(roundTrips(replay)).toBe(2);

    // Someone else's parent: 404, and nothing committed under the key, so the retry is another 404, not a 410.
    const other = await verifiedUser("crash");
    const theirs = (await (await postJson("/v1/products", { name: `Theirs ${tag}` }, bearer(other.tokens.access_token))).json()) as {
      id: number;
    };
    const componentKey = crypto.randomUUID();
    const path = `/v1/products/${theirs.id}/components`;
    await expectProblem(await postJson(path, { name: "Intruder", amount_in_parent: 1 }, keyed(token, componentKey)), 404, "NOT_FOUND");
    await expectProblem(await postJson(path, { name: "Intruder", amount_in_parent: 1 }, keyed(token, componentKey)), 404, "NOT_FOUND");
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM idempotency_keys WHERE key = ?").bind(componentKey).first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });
});
