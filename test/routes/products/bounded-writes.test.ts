import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/lib/logger";
import { requeueStalledDeletions } from "../../../src/services/deletions/jobs";
import { buildServices } from "../../../src/services/platform/build-services";
import { bearer, patchMe, verifiedUser } from "../../support/accounts";
import { countOf, deletionJobs, finishDeletionJobs, productWithComponents, runOneSlice } from "../../support/deletions";
import { api, d1Cost, roundTrips } from "../../support/http";
import { captureLogs } from "../../support/logs";
import { pendingWithoutJob } from "../../support/media";

// Deleting a record with more records under it than one slice removes (DELETION_SLICE_RECORDS:
// 50 in the tests): the request hides it at once in one small batch, and a deletion job removes
// the rows in slices of 50 on the queue (docs/storage.md, "Deletion jobs").

type Body = Record<string, any>;

let owner: Awaited<ReturnType<typeof verifiedUser>>;
let headers: Record<string, string>;

beforeAll(async () => {
  owner = await verifiedUser("bigtree");
  headers = bearer(owner.tokens.access_token);
  expect((await patchMe(owner.tokens.access_token, { preferences: { profile_visibility: "public" } })).status).toBe(200);
});

const note = (text: string) => ({ bytes: new TextEncoder().encode(text), name: "notes.txt", type: "text/plain" });
const usage = async () =>
  (await env.DB.prepare("SELECT upload_file_count AS files, upload_total_bytes AS bytes FROM users WHERE id = ?")
    .bind(owner.id)
    .first<{ files: number; bytes: number }>())!;
const remove = (path: string) => api(path, { method: "DELETE", headers });

/** Reads `path` anonymously until a stored copy answers (copies are stored after the answer, in waitUntil). */
async function readUntilHit(path: string): Promise<void> {
  for (let tries = 0; tries < 10; tries++) {
    const response = await api(path);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    if (response.headers.get("x-cache") === "hit") return;
    await scheduler.wait(20);
  }
  throw new Error(`${path} was never served from a copy`);
}
const treeOf = (id: number) => api(`/v1/products/${id}/components/tree?recursion_depth=10`);
const namesIn = (nodes: Body[]): string[] => nodes.flatMap((node) => [node.name, ...namesIn(node.components)]);

describe("deleting a base product with more components than a slice", () => {
  it("hides the whole tree at once, for every read, and removes it in slices of 50 on the queue", async () => {
    const product = await productWithComponents(headers, "Tower fan", 40, 2); // 1 + 40 + 80 records
    const deep = (await (await treeOf(product.id)).json()) as Body[];
    const grandchild = deep[0]!.components[0].id as number;
    await pendingWithoutJob("files", grandchild, owner.id, note("a measurement"));
    const charged = await usage();
    expect(charged.files).toBeGreaterThanOrEqual(1);
    // Cached before the deletion: a sliced deletion must leave no copy to serve.
    for (const path of [
      `/v1/products/${product.id}`,
      `/v1/components/${grandchild}`,
      `/v1/products/${product.id}/components/tree?recursion_depth=10`,
      "/v1/products?search=tower",
    ]) {
      await readUntilHit(path);
    }

    const deleted = await remove(`/v1/products/${product.id}`);
    expect(deleted.status).toBe(204);
    // The job, unless the queue beside the tests has already finished it.
    for (const job of await deletionJobs()) expect(job).toMatchObject({ kind: "record", record_id: product.id, user_id: owner.id });
    // As a small deletion: the token check, the bounded count of what goes, and the small batch that hides it.
    expect(roundTrips(deleted)).toBe(3);
    expect(d1Cost(deleted).rowsWritten).toBeLessThan(40);

    // Gone for every read at once (the rows go in the background meanwhile).
    expect((await api(`/v1/products/${product.id}`)).status).toBe(404);
    expect((await api(`/v1/components/${product.components[0]}`)).status).toBe(404);
    expect((await api(`/v1/components/${grandchild}`)).status).toBe(404);
    expect((await api(`/v1/components/${grandchild}/files`)).status).toBe(404);
    expect((await treeOf(product.id)).status).toBe(404);
    expect((await api(`/v1/products/${product.id}/export?format=json`)).status).toBe(404);
    const search = (await (await api("/v1/products?search=tower")).json()) as Body;
    expect(search.items).toEqual([]);
    const profile = (await (await api(`/v1/profiles/${owner.username}`)).json()) as Body;
    expect(profile.product_count).toBe(0);
    // Nothing can be added under it any more.
    const added = await api(`/v1/components/${product.components[1]}/components`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ name: "Late part", amount_in_parent: 1 }),
    });
    expect(added.status).toBe(404);

    await finishDeletionJobs();
    expect(await countOf("SELECT 1 FROM products WHERE root_id = ?", product.id)).toBe(0);
    expect(await countOf("SELECT 1 FROM files WHERE product_id = ?", grandchild)).toBe(0);
    expect(await countOf("SELECT 1 FROM hidden_records")).toBe(0);
    expect(await deletionJobs()).toEqual([]);
    // The file's share of the quota went with it.
    const released = await usage();
    expect(released.files).toBe(charged.files - 1);
  });

  it("leaves nothing half-done when a slice dies: the retry goes on from the last slice that committed", async () => {
    const product = await productWithComponents(headers, "Dehumidifier", 60, 1); // 121 records
    // Every slice after the first fails inside its batch, as a database error would make it.
    await env.DB.prepare(
      "CREATE TRIGGER test_second_slice_dies BEFORE UPDATE OF records_done ON deletion_jobs WHEN old.records_done >= 50 BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
    ).run();
    try {
      expect((await remove(`/v1/products/${product.id}`)).status).toBe(204);
      const [job] = await deletionJobs();
      await runOneSlice(job!.id).catch(() => undefined);
      await expect(runOneSlice(job!.id)).rejects.toThrow(/injected failure/);
      // Exactly one slice committed: 50 records gone with their progress, the other 71 still hidden.
      expect((await deletionJobs())[0]).toMatchObject({ records_done: 50, slices: 1 });
      expect(await countOf("SELECT 1 FROM products WHERE root_id = ?", product.id)).toBe(71);
      expect((await api(`/v1/products/${product.id}`)).status).toBe(404);
      expect((await api(`/v1/components/${product.components[59]}`)).status).toBe(404);
    } finally {
      await env.DB.prepare("DROP TRIGGER test_second_slice_dies").run();
    }
    await finishDeletionJobs();
    expect(await countOf("SELECT 1 FROM products WHERE root_id = ?", product.id)).toBe(0);
    expect(await deletionJobs()).toEqual([]);
  });

  it("is done in the request when the tree fits in one slice", async () => {
    const product = await productWithComponents(headers, "Desk lamp", 30);
    expect((await remove(`/v1/products/${product.id}`)).status).toBe(204);
    expect(await deletionJobs()).toEqual([]);
    expect(await countOf("SELECT 1 FROM products WHERE root_id = ?", product.id)).toBe(0);
  });

  it("starts one job when two deletions race", async () => {
    const product = await productWithComponents(headers, "Air purifier", 55);
    const answers = await Promise.all([remove(`/v1/products/${product.id}`), remove(`/v1/products/${product.id}`)]);
    for (const answer of answers) expect([204, 404]).toContain(answer.status);
    expect(answers.some((answer) => answer.status === 204)).toBe(true);
    expect(await deletionJobs()).toHaveLength(1);
    await finishDeletionJobs();
    expect(await countOf("SELECT 1 FROM products WHERE root_id = ?", product.id)).toBe(0);
  });
});

describe("deleting a component with more records under it than a slice", () => {
  it("hides that subtree at once and leaves the rest of the product as it was", async () => {
    const product = await productWithComponents(headers, "Robot vacuum", 3);
    const [kept, doomed, other] = product.components as [number, number, number];
    const many = Array.from({ length: 60 }, (_, i) => ({ name: `Brush bristle ${i}`, amount_in_parent: 1 }));
    const added = await api(`/v1/components/${doomed}/components`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ name: "Brush roll", amount_in_parent: 1, components: many }),
    });
    expect(added.status, await added.clone().text()).toBe(201);
    const roll = ((await added.json()) as Body).id as number;
    const bristle = ((await (await api(`/v1/components/${roll}`)).json()) as Body).components[0].id as number;

    expect((await remove(`/v1/components/${doomed}`)).status).toBe(204);
    expect(await deletionJobs()).toHaveLength(1);
    for (const id of [doomed, roll, bristle]) expect((await api(`/v1/components/${id}`)).status).toBe(404);
    for (const id of [kept, other]) expect((await api(`/v1/components/${id}`)).status).toBe(200);
    const detail = (await (await api(`/v1/products/${product.id}`)).json()) as Body;
    expect(detail.components.map((c: Body) => c.id)).toEqual([kept, other]);
    const tree = (await (await treeOf(product.id)).json()) as Body[];
    expect(namesIn(tree).some((name) => name.startsWith("Brush"))).toBe(false);
    // A component beside it still takes new components.
    const beside = await api(`/v1/components/${kept}/components`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ name: "Wheel", amount_in_parent: 2 }),
    });
    expect(beside.status).toBe(201);

    await finishDeletionJobs();
    expect(await countOf("SELECT 1 FROM products WHERE id IN (?, ?, ?)", doomed, roll, bristle)).toBe(0);
    expect(await countOf("SELECT 1 FROM products WHERE root_id = ?", product.id)).toBe(1 + 2 + 1);
    expect((await api(`/v1/products/${product.id}`)).status).toBe(200);
  });
});

describe("creating a product with 1,000 components", () => {
  it("runs a handful of statements however many records and entries the body holds", async () => {
    const steel = (await env.DB.prepare("INSERT INTO materials (name) VALUES ('Steel (bounded writes)') RETURNING id").first<{
      id: number;
    }>())!.id;
    const copper = (await env.DB.prepare("INSERT INTO materials (name) VALUES ('Copper (bounded writes)') RETURNING id").first<{
      id: number;
    }>())!.id;
    const bom = [
      { material_id: steel, quantity: 2, unit: "g" },
      { material_id: copper, quantity: 1, unit: "g" },
    ];
    // 10 x (1 + 99) = 1,000 components, each with two bill-of-materials entries.
    const components = Array.from({ length: 10 }, (_, i) => ({
      name: `Module ${i}`,
      amount_in_parent: 1,
      bill_of_materials: bom,
      components: Array.from({ length: 99 }, (_, j) => ({ name: `Part ${i}.${j}`, amount_in_parent: 1, bill_of_materials: bom })),
    }));
    const logs = captureLogs();
    const created = await api("/v1/products", {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ name: "Server rack", components }),
    });
    logs.restore();
    expect(created.status, await created.clone().text()).toBe(201);
    const body = (await created.json()) as Body;
    expect(body.components).toHaveLength(10);
    // D1 counts each statement of a batch against its 1,000 queries per invocation: a statement
    // per row would be 3,001 here.
    const line = logs.entries().find((entry) => entry.msg === "request" && entry.method === "POST" && entry.path === "/v1/products");
    expect(line?.d1_statements).toBeLessThan(15);
    expect(await countOf("SELECT 1 FROM products WHERE root_id = ?", body.id)).toBe(1001);
    expect(await countOf("SELECT 1 FROM bill_of_materials b JOIN products p ON p.id = b.product_id WHERE p.root_id = ?", body.id)).toBe(
      2000,
    );
    const tree = (await (await treeOf(body.id)).json()) as Body[];
    expect(namesIn(tree)).toHaveLength(1000);
    expect(tree[9]!.components[98]).toMatchObject({ name: "Part 9.98", amount_in_parent: 1, parent_id: tree[9]!.id });
    const part = (await (await api(`/v1/components/${tree[3]!.components[7].id}`)).json()) as Body;
    expect(part.bill_of_materials.map((e: Body) => [e.material_id, e.quantity, e.unit])).toEqual([
      [copper, 1, "g"],
      [steel, 2, "g"],
    ]);
  });
});

describe("an owner's change of what reads show of them", () => {
  it("renews each of their trees' generations once, not once per record", async () => {
    const user = await verifiedUser("manyparts");
    await productWithComponents(bearer(user.tokens.access_token), "Loom", 60);
    await productWithComponents(bearer(user.tokens.access_token), "Spinning wheel", 60);
    const changed = await patchMe(user.tokens.access_token, { preferences: { profile_visibility: "private" } });
    expect(changed.status).toBe(200);
    // The user row, two tree generations, the catalogue's (122 records: a row each before migration 0021).
    expect(d1Cost(changed).rowsWritten).toBeLessThan(20);
  });
});

describe("a deletion job whose messages were lost", () => {
  it("is queued again by the scheduled sweep once it has not moved for ten minutes, at most once a period", async () => {
    const product = await productWithComponents(headers, "Lost-message heater", 55);
    // A job as the request makes it, with no message sent: what a crash after the batch leaves.
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO deletion_jobs (id, kind, record_id, user_id, updated_at) VALUES ('lost-job', 'record', ?, ?, unixepoch() - 3600)",
      ).bind(product.id, owner.id),
      env.DB.prepare("INSERT INTO hidden_records (record_id, root_id, job_id) VALUES (?, ?, 'lost-job')").bind(product.id, product.id),
      env.DB.prepare("UPDATE products SET parent_id = id, amount_in_parent = 1, depth = 1 WHERE id = ?").bind(product.id),
    ]);
    expect((await api(`/v1/products/${product.id}`)).status).toBe(404);
    const svc = buildServices(env, { log: createLogger({ test: "deletion-sweep" }) });
    const now = Math.floor(Date.now() / 1000);
    expect(await requeueStalledDeletions(svc, now)).toBe(1);
    // Claimed: the next sweep within the period leaves it to the message just sent.
    expect(await requeueStalledDeletions(svc, now + 60)).toBe(0);
    await finishDeletionJobs();
    expect(await countOf("SELECT 1 FROM products WHERE root_id = ?", product.id)).toBe(0);
  });
});
