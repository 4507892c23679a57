import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { type ExportFormat, type ExportScope, exportChunks } from "../../src/services/products/export";

// Storage is per test file: the rows seeded here are the only products the export sees.

let owner = 0;
/** Base products by name, and the expected depth-first order of every record of the `deep` one. */
const roots: Record<string, number> = {};
const deepOrder: number[] = [];

async function insert(name: string, parent: number | null, depth: number, created = 1_780_000_000): Promise<number> {
  const row = await env.DB.prepare(
    `INSERT INTO products (owner_id, name, parent_id, amount_in_parent, depth, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  )
    .bind(owner, name, parent, parent === null ? null : 1, depth, created, created)
    .first<{ id: number }>();
  return row!.id;
}

beforeAll(async () => {
  owner = (await env.DB.prepare(
    "INSERT INTO users (email, email_canonical, username) VALUES ('ex@pe.example.org', 'ex@pe.example.org', 'pe_owner') RETURNING id",
  ).first<{ id: number }>())!.id;
  for (let i = 0; i < 7; i++) roots[`p${i}`] = await insert(`Product ${i}`, null, 0, 1_780_000_000 + i);

  // A tree whose breadth-first order (and id order) differs from its depth-first order: a chain
  // ten levels deep under the first child, whose records get ids after the second child's.
  const deep = roots.p3!;
  const first = await insert("first", deep, 1);
  const second = await insert("second", deep, 1);
  const secondChild = await insert("second.child", second, 2);
  const chain = [first];
  for (let depth = 2; depth <= 10; depth++) chain.push(await insert(`chain ${depth}`, chain[chain.length - 1]!, depth));
  const firstSibling = await insert("first.sibling", first, 2);
  deepOrder.push(deep, first, ...chain.slice(1), firstSibling, second, secondChild);
});

async function read(scope: ExportScope, format: ExportFormat, chunkSize?: number) {
  const { db, roundTrips } = createDb(env.DB);
  const chunks: number[][][] = [];
  for await (const trees of exportChunks({ db }, scope, format, chunkSize)) chunks.push(trees.map((tree) => tree.map((row) => row.id)));
  return { chunks, roundTrips: roundTrips.count };
}

describe("export chunks", () => {
  it("reads one round trip per chunk of base products, whole trees in each, in the list's order", async () => {
    const { chunks, roundTrips } = await read({ filter: {}, viewerId: null }, "csv", 3);
    // -created_at: p6 first. 7 base products in chunks of 3: 3 + 3 + 1, and the short chunk ends it.
    expect(chunks.map((trees) => trees.map((tree) => tree[0]))).toEqual([
      [roots.p6, roots.p5, roots.p4],
      [roots.p3, roots.p2, roots.p1],
      [roots.p0],
    ]);
    expect(roundTrips).toBe(3);
    expect(chunks[1]![0]).toEqual(deepOrder);
  });

  it("ends with one empty read when the last chunk is full", async () => {
    const { chunks, roundTrips } = await read({ filter: {}, viewerId: null }, "json", 7);
    expect(chunks).toHaveLength(1);
    expect(roundTrips).toBe(2);
  });

  it("walks every record depth first, components of a parent by id, ten levels down", async () => {
    for (const format of ["csv", "json"] as const) {
      const { chunks, roundTrips } = await read({ productId: roots.p3! }, format);
      expect(chunks).toEqual([[deepOrder]]);
      expect(roundTrips).toBe(1);
    }
  });

  it("reads nothing for a component id", async () => {
    const { chunks } = await read({ productId: deepOrder[1]! }, "csv");
    expect(chunks).toEqual([[]]);
  });
});
