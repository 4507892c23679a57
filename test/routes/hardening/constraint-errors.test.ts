import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, postJson, verifiedUser } from "../../support/accounts";
import { api, expectProblem } from "../../support/http";

// Issue 21, deliver 1: a write that a table's own constraint refuses after validation passed is
// answered 422 (409 for uniqueness) with a pointer where the constraint names a member, never
// 500, and an idempotent create refused that way gives its key up. A unique index and a trigger
// added here make constraint failures that no validation rule knows about: the index fails with
// SQLite's own UNIQUE error, the trigger with exactly the words of the name-length CHECK.

type User = Awaited<ReturnType<typeof verifiedUser>>;
let alice: User;
let auth: Record<string, string>;

beforeAll(async () => {
  alice = await verifiedUser("constraints");
  auth = bearer(alice.tokens.access_token);
});

const SLIPS_PAST = "Slips past validation";

async function withTrigger<T>(run: () => Promise<T>): Promise<T> {
  await env.DB.exec(
    `CREATE TRIGGER test_name_check BEFORE INSERT ON products WHEN NEW.name = '${SLIPS_PAST}' BEGIN SELECT RAISE(ABORT, 'CHECK constraint failed: products_name_length'); END`,
  );
  try {
    return await run();
  } finally {
    await env.DB.exec("DROP TRIGGER test_name_check");
  }
}

async function withUniqueModel<T>(model: string, run: () => Promise<T>): Promise<T> {
  await env.DB.exec(`CREATE UNIQUE INDEX test_unique_model ON products (model) WHERE model = '${model}'`);
  try {
    return await run();
  } finally {
    await env.DB.exec("DROP INDEX test_unique_model");
  }
}

const count = async (name: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM products WHERE name = ?").bind(name).first<{ n: number }>())!.n;

describe("a constraint failure that validation let through", () => {
  it("is 422 at the member the CHECK guards, for a base product and a nested component alike, and nothing is stored", async () => {
    await withTrigger(async () => {
      const refused = await postJson("/v1/products", { name: SLIPS_PAST }, auth);
      const problem = await expectProblem(refused, 422, "VALIDATION_FAILED");
      expect(problem.errors).toEqual([{ pointer: "/name", detail: "The value breaks a rule of the stored data." }]);
      const nested = await postJson("/v1/products", { name: "Kettle", components: [{ name: SLIPS_PAST, amount_in_parent: 1 }] }, auth);
      await expectProblem(nested, 422, "VALIDATION_FAILED");
    });
    expect(await count(SLIPS_PAST)).toBe(0);
    expect(await count("Kettle")).toBe(0);
  });

  it("gives an Idempotency-Key up, so a retry once the cause is gone creates the record", async () => {
    const key = crypto.randomUUID();
    await withTrigger(async () => {
      for (let attempt = 0; attempt < 2; attempt++) {
        await expectProblem(
          await postJson("/v1/products", { name: SLIPS_PAST }, { ...auth, "idempotency-key": key }),
          422,
          "VALIDATION_FAILED",
        );
      }
    });
    const retried = await postJson("/v1/products", { name: SLIPS_PAST }, { ...auth, "idempotency-key": key });
    expect(retried.status, await retried.clone().text()).toBe(201);
    const replayed = await postJson("/v1/products", { name: SLIPS_PAST }, { ...auth, "idempotency-key": key });
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(await count(SLIPS_PAST)).toBe(1);
  });

  it("is 409 ALREADY_EXISTS naming the member for a uniqueness failure, on create and on PATCH", async () => {
    const model = `unique-${crypto.randomUUID()}`;
    await withUniqueModel(model, async () => {
      const first = await postJson("/v1/products", { name: "Grinder", model }, auth);
      expect(first.status).toBe(201);
      const second = await expectProblem(await postJson("/v1/products", { name: "Grinder 2", model }, auth), 409, "ALREADY_EXISTS");
      expect(second.errors).toEqual([{ pointer: "/model", detail: "Another record already has this value." }]);

      const other = (await (await postJson("/v1/products", { name: "Grinder 3" }, auth)).json()) as { id: number };
      const patch = await api(`/v1/products/${other.id}`, {
        method: "PATCH",
        headers: { ...auth, "content-type": "application/json", "if-match": '"1"' },
        body: JSON.stringify({ model }),
      });
      expect((await expectProblem(patch, 409, "ALREADY_EXISTS")).errors).toEqual([
        { pointer: "/model", detail: "Another record already has this value." },
      ]);
    });
    expect(await count("Grinder 2")).toBe(0);
  });
});
