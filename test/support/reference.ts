import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { worthStoring } from "../../src/middleware/kv-cache";
import { bearer } from "./accounts";
import { api, expectProblem } from "./http";
import { bootstrapAdmin } from "./mfa";

// Helpers of the reference-data tests (taxonomies, categories, materials, product types) and of
// the response cache they share.

/** A page of a list answer. */
export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  size: number;
  pages: number;
}

/** A taxonomy as the API answers it. */
export interface Taxonomy {
  id: number;
  name: string;
  version: string;
  description: string | null;
  domains: string[];
  source: string | null;
  created_at: string;
  updated_at: string;
}

/** A category as the API answers it. */
export interface Category {
  id: number;
  name: string;
  description: string | null;
  external_id: string | null;
  taxonomy_id: number;
  supercategory_id: number | null;
  created_at: string;
  updated_at: string;
}

/** A node of a category tree answer. */
export interface CategoryNode {
  id: number;
  name: string;
  description: string | null;
  external_id: string | null;
  taxonomy_id: number;
  subcategories: CategoryNode[];
}

let sequence = 0;

/** `prefix` and a stamp no other call gives: storage is per test file, but tests within a file share it. */
export const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(sequence++).toString(36)}`;

/** A request with `token` as bearer (none: anonymous) and `body` as JSON. */
export function send(method: string, path: string, token: string | null, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = token ? bearer(token) : {};
  if (body !== undefined) headers["content-type"] = "application/json";
  return api(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

/** The same as the bootstrap superuser, who has TOTP and so passes `adminOnly`. */
export async function asAdmin(method: string, path: string, body?: unknown): Promise<Response> {
  return send(method, path, (await bootstrapAdmin()).tokens.access_token, body);
}

/** Asserts `status` (showing the body when it differs) and returns the JSON body. */
export async function expectStatus<T>(response: Response, status: number): Promise<T> {
  expect(response.status, await response.clone().text()).toBe(status);
  return (await response.json()) as T;
}

/** A public read that must answer 200: its JSON body. */
export async function read<T>(path: string): Promise<T> {
  return expectStatus<T>(await api(path), 200);
}

/** The JSON pointers of a 422 `VALIDATION_FAILED`. */
export async function pointers(response: Response): Promise<string[] | undefined> {
  return (await expectProblem(response, 422, "VALIDATION_FAILED")).errors?.map((e) => e.pointer);
}

/** Reads `path` until the answer comes from the KV cache, and returns that answer: the cache is written after a response is sent. */
export async function readUntilHit(path: string): Promise<Response> {
  for (let i = 0; i < 100; i++) {
    const response = await api(path);
    if (response.headers.get("x-cache") === "hit") return response;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${path} never came from the cache`);
}

/** A public read that, when it missed, waits until its answer is in KV, so the next read is a hit. Returns the first answer. */
export async function readAndCache(path: string): Promise<Response> {
  const response = await api(path);
  const storable = worthStoring(new URL(path, "http://localhost"), await response.clone().text());
  if (response.status === 200 && response.headers.get("x-cache") === "miss" && storable) await readUntilHit(path);
  return response;
}

/** Creates a taxonomy through the admin route; a fresh name, version 1 and domain products unless `body` says otherwise. */
export async function newTaxonomy(body: Record<string, unknown> = {}): Promise<Taxonomy> {
  return expectStatus<Taxonomy>(
    await asAdmin("POST", "/v1/admin/taxonomies", { name: unique("Tax "), version: "1", domains: ["products"], ...body }),
    201,
  );
}

/** Creates a category through the admin route. */
export async function newCategory(body: Record<string, unknown>): Promise<Category> {
  return expectStatus<Category>(await asAdmin("POST", "/v1/admin/categories", body), 201);
}

/** Category tree nodes by name, nested as `name: {children}`; leaves as `name: {}`. */
export function shape(nodes: readonly Pick<CategoryNode, "name" | "subcategories">[]): Record<string, unknown> {
  return Object.fromEntries(nodes.map((node) => [node.name, shape(node.subcategories)]));
}

/**
 * A taxonomy with top-level categories, inserted with SQL: for tests that need fixed rows without
 * going through the admin routes. Returns the taxonomy's id and the categories' ids by name.
 */
export async function seedTaxonomy(
  taxonomy: { name: string; version: string; domains: readonly string[] },
  categoryNames: readonly string[],
): Promise<{ taxonomyId: number; category: Record<string, number> }> {
  const row = await env.DB.prepare("INSERT INTO taxonomies (name, version, domains) VALUES (?, ?, ?) RETURNING id")
    .bind(taxonomy.name, taxonomy.version, JSON.stringify(taxonomy.domains))
    .first<{ id: number }>();
  const taxonomyId = row!.id;
  const category: Record<string, number> = {};
  for (const name of categoryNames) {
    const inserted = await env.DB.prepare("INSERT INTO categories (name, taxonomy_id) VALUES (?, ?) RETURNING id")
      .bind(name, taxonomyId)
      .first<{ id: number }>();
    category[name] = inserted!.id;
  }
  return { taxonomyId, category };
}

/** A material linked to `categoryIds`, inserted with SQL (a fixture: material links have tests of their own); its id. */
export async function seedLinkedMaterial(categoryIds: readonly number[]): Promise<number> {
  const material = await env.DB.prepare("INSERT INTO materials (name) VALUES (?) RETURNING id")
    .bind(unique("Material "))
    .first<{ id: number }>();
  await env.DB.batch(
    categoryIds.map((id) =>
      env.DB.prepare("INSERT INTO material_categories (material_id, category_id) VALUES (?, ?)").bind(material!.id, id),
    ),
  );
  return material!.id;
}

/** The categories a material is linked to, as stored. */
export async function materialCategoryIds(materialId: number): Promise<number[]> {
  const links = await env.DB.prepare("SELECT category_id FROM material_categories WHERE material_id = ?")
    .bind(materialId)
    .all<{ category_id: number }>();
  return links.results.map((row) => row.category_id);
}
