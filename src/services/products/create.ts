import { type SQL, sql } from "drizzle-orm";
import { assertMayModify, mayModifySql } from "../../auth/permissions";
import type { SessionUser } from "../../auth/session-user";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { isConstraintFailure } from "../../db/constraint-errors";
import { columnList, type Row } from "../../db/rows";
import type { products } from "../../db/schema";
import type { HeldKey } from "../../lib/idempotency-key";
import { ApiError, type FieldError } from "../../lib/problem";
import { commitStatements, isKeyLost, requestInProgress } from "../platform/idempotency";
import type { BomEntryValues } from "./bill-of-materials";
import { normalizeBrand, normalizeCircularity, type RecordFields } from "./fields";
import { existingIdsStatement, kindCondition, type RecordKind, type RecordRow, reserveIdsStatement } from "./records";
import type { VideoValues } from "./videos";

/** At most this many components in one create body (the same bound as a tree read). */
export const MAX_COMPONENTS_PER_CREATE = 1000;

/** Bill-of-materials entries per insert statement: a JSON array of at most some 300 KB, well under D1's 2 MB for a value. */
const BOM_ENTRIES_PER_STATEMENT = 5_000;

/** Most direct components one create body may carry at each level, and the deepest nesting below a base product. */
export const MAX_COMPONENTS_PER_LEVEL = 100;
export const MAX_COMPONENT_DEPTH = 10;

/** A component as a create body gives it: nested components of its own, to any depth the limit allows. */
export interface ComponentCreate extends RecordFields {
  amount_in_parent: number;
  components?: ComponentCreate[];
  bill_of_materials?: BomEntryValues[];
}

/** A base product as a create body gives it (the route's schema parses to this). */
export interface ProductCreate extends RecordFields {
  components?: ComponentCreate[];
  bill_of_materials?: BomEntryValues[];
  videos?: VideoValues[];
}

/** Where components are being created: under a record of this kind, which the caller must own. */
export interface CreateParent {
  id: number;
  kind: RecordKind;
}

/** A record of the body, in creation order; `parent` is the index of its parent in the body (null: the top record). */
interface Planned {
  parent: number | null;
  /** Levels below the top record of the body. */
  depth: number;
  input: ProductCreate | ComponentCreate;
  pointer: string;
}

export interface CreatedRecords {
  rows: RecordRow[];
  bom: Map<number, { material_id: number; material_name: string; quantity: number; unit: string }[]>;
  videos: {
    id: number;
    url: string;
    title: string | null;
    description: string | null;
    video_metadata: string | null;
    created_at: number;
  }[];
}

function plan(input: ProductCreate | ComponentCreate): Planned[] {
  const planned: Planned[] = [];
  const walk = (node: ProductCreate | ComponentCreate, parent: number | null, depth: number, pointer: string) => {
    const index = planned.length;
    planned.push({ parent, depth, input: node, pointer });
    (node.components ?? []).forEach((child, i) => walk(child, index, depth + 1, `${pointer}/components/${i}`));
  };
  walk(input, null, 0, "");
  if (planned.length - 1 > MAX_COMPONENTS_PER_CREATE) {
    throw new ApiError(422, {
      code: "VALIDATION_FAILED",
      detail: `One create body may hold at most ${MAX_COMPONENTS_PER_CREATE} components; create the rest under their parents.`,
      errors: [{ pointer: "/components", detail: `More than ${MAX_COMPONENTS_PER_CREATE} components in total.` }],
    });
  }
  return planned;
}

const tooDeep = (pointer: string, level: number) =>
  new ApiError(400, {
    code: "COMPONENT_TOO_DEEP",
    detail: `Components nest at most ${MAX_COMPONENT_DEPTH} levels below a base product; ${pointer || "this component"} would be at level ${level}.`,
  });

/** The columns a create writes, in the order of its JSON rows' fields (the record statements below). */
const INSERTED_FIELDS = [
  "id",
  "parent_id",
  "amount_in_parent",
  "depth",
  "owner_id",
  "name",
  "description",
  "brand",
  "model",
  "weight_g",
  "height_cm",
  "width_cm",
  "depth_cm",
  "circularity_properties",
  "product_type_id",
  "created_at",
  "updated_at",
] as const satisfies readonly (keyof Row<typeof products>)[];

/**
 * Creates a base product (parent null) or a component under `parent`, with every nested component,
 * bill of materials and video, in ONE atomic batch: the ids come from a block reserved by the
 * batch's first statement, children name their parents' ids, and the database's own constraints
 * (foreign keys for the parent, materials and product types; the depth CHECK) refuse anything
 * invalid, rolling the whole batch back. Only then does a second round trip look up what was wrong,
 * to answer 404, 400 or 422 precisely. Returns the created rows as the read statements would
 * select them, built from what is known rather than read back. With `idempotencyKey` (the key the
 * request holds), the same batch marks the key committed with the top record's id, or fails
 * (409, nothing created) when the key is no longer held: exactly once, crash or not.
 */
export async function createRecords(
  svc: Pick<Services, "db" | "clock">,
  owner: SessionUser,
  input: ProductCreate | ComponentCreate,
  parent: CreateParent | null,
  notFound: () => ApiError,
  idempotencyKey?: HeldKey,
): Promise<CreatedRecords> {
  const planned = plan(input);
  const deepestBelowTop = planned.reduce((max, p) => Math.max(max, p.depth), 0);
  if (!parent && deepestBelowTop > MAX_COMPONENT_DEPTH) {
    const culprit = planned.find((p) => p.depth > MAX_COMPONENT_DEPTH)!;
    throw tooDeep(culprit.pointer, culprit.depth);
  }
  const typeIds = [...new Set(planned.flatMap((p) => (p.input.product_type_id ? [p.input.product_type_id] : [])))];
  const materialIds = [...new Set(planned.flatMap((p) => (p.input.bill_of_materials ?? []).map((e) => e.material_id)))];

  const n = planned.length;
  const now = Math.floor(svc.clock.now() / 1000);
  const first = sql`(SELECT next_id - ${n} FROM id_blocks WHERE name = 'products')`;
  const columns = columnList(INSERTED_FIELDS);

  // Raw: the records and their bills of materials go in as a few set-based statements over JSON
  // arrays (one bound parameter each), not a statement per row: D1 counts every statement of a
  // batch against its 1,000 queries per invocation, and a body may hold 1,000 components with up
  // to 100 entries each. Rows are inserted in body order (parents before their children: the
  // insert trigger reads a parent's root_id), their ids offsets from the block reserved first.
  const recordValues = planned.map((p, index) => {
    const record = p.input;
    return [
      index,
      p.parent,
      p.depth,
      "amount_in_parent" in record ? record.amount_in_parent : null,
      record.name,
      record.description ?? null,
      normalizeBrand(record.brand),
      record.model ?? null,
      record.weight_g ?? null,
      record.height_cm ?? null,
      record.width_cm ?? null,
      record.depth_cm ?? null,
      normalizeCircularity(record.circularity_properties),
      record.product_type_id ?? null,
    ];
  });
  const field = (k: number) => sql.raw(`json_extract(j.value, '$[${k}]')`);
  const statements: SQL[] = [reserveIdsStatement(n)];
  if (parent) {
    // A parent of the right kind that the write rule lets the caller add to. Anything else
    // inserts nothing, and the rows that name this one then fail their foreign key.
    const top = recordValues[0]!;
    statements.push(sql`INSERT INTO products (${columns})
      SELECT ${first}, q.id, ${top[3]}, q.depth + 1, ${owner.id}, ${top[4]}, ${top[5]}, ${top[6]}, ${top[7]}, ${top[8]}, ${top[9]},
        ${top[10]}, ${top[11]}, ${top[12]}, ${top[13]}, ${now}, ${now} FROM products q
      WHERE q.id = ${parent.id} AND ${mayModifySql(owner, sql.raw("q.owner_id"), "add")} AND ${kindCondition(parent.kind, "q")} RETURNING id, depth`);
  }
  // Depths below a parent: the top record's depth plus the level in the body (the top record of a
  // component create was inserted just before; were it not, the depth is NULL and the insert fails).
  const depth = parent ? sql`(SELECT depth FROM products WHERE id = b.first) + ${field(2)}` : field(2);
  if (n > (parent ? 1 : 0)) {
    statements.push(sql`INSERT INTO products (${columns})
      SELECT b.first + j.key, b.first + ${field(1)}, CASE WHEN ${field(1)} IS NULL THEN NULL ELSE ${field(3)} END, ${depth}, ${owner.id},
        ${field(4)}, ${field(5)}, ${field(6)}, ${field(7)}, ${field(8)}, ${field(9)}, ${field(10)}, ${field(11)}, ${field(12)}, ${field(13)},
        ${now}, ${now}
      FROM json_each(${JSON.stringify(recordValues)}) j CROSS JOIN (SELECT ${first} AS first) b
      WHERE j.key >= ${parent ? 1 : 0} ORDER BY j.key`);
  }
  const entries = planned.flatMap((p, index) =>
    (p.input.bill_of_materials ?? []).map((entry) => [index, entry.material_id, entry.quantity, entry.unit]),
  );
  for (let i = 0; i < entries.length; i += BOM_ENTRIES_PER_STATEMENT) {
    statements.push(sql`INSERT INTO bill_of_materials (product_id, material_id, quantity, unit, created_at, updated_at)
      SELECT b.first + ${field(0)}, ${field(1)}, ${field(2)}, ${field(3)}, ${now}, ${now}
      FROM json_each(${JSON.stringify(entries.slice(i, i + BOM_ENTRIES_PER_STATEMENT))}) j CROSS JOIN (SELECT ${first} AS first) b`);
  }
  const videoInputs = "videos" in input ? (input.videos ?? []) : [];
  for (const video of videoInputs) {
    // Raw: the product's id is the reserved block's first, read inside the batch.
    statements.push(sql`INSERT INTO videos (product_id, url, title, description, video_metadata, created_at, updated_at)
      VALUES (${first}, ${video.url}, ${video.title ?? null}, ${video.description ?? null},
        ${video.video_metadata ? JSON.stringify(video.video_metadata) : null}, ${now}, ${now}) RETURNING id`);
  }
  const lookups = [existingIdsStatement("product_types", typeIds), existingIdsStatement("materials", materialIds)];
  statements.push(...lookups);
  // The scores the triggers left on the new records once all of them are in: read back (a range
  // of the primary key), never worked out here, so they are the stored ones.
  statements.push(sql`SELECT id, quality_score FROM products WHERE id BETWEEN ${first} AND ${first} + ${n - 1}`);
  // Last, so that the key is marked committed only if the top record was made (a component create
  // under someone else's parent makes nothing and is refused below, releasing the key).
  const commit = idempotencyKey
    ? commitStatements(idempotencyKey, first, now, sql`EXISTS (SELECT 1 FROM products WHERE id = ${first})`)
    : [];
  statements.push(...commit);

  let results: unknown[][];
  let scores: Map<number, number>;
  try {
    results = (await batchRows<unknown[]>(svc.db, statements)).slice(0, statements.length - commit.length);
    const scoreRows = results.pop() as { id: number; quality_score: number }[];
    scores = new Map(scoreRows.map((row) => [row.id, row.quality_score]));
  } catch (error) {
    if (isKeyLost(error)) throw requestInProgress();
    if (!isConstraintFailure(error, ["FOREIGN KEY", "CHECK", "NOT NULL"])) throw error;
    throw await diagnose(svc, owner, planned, parent, notFound, typeIds, materialIds, error);
  }
  const reserved = results[0] as { first_id: number }[];
  const firstId = reserved[0]!.first_id;
  // The top record of a component create inserts nothing when the parent is not the caller's;
  // with no rows naming it, nothing failed, so this is found here.
  const topRows = parent ? (results[1] as { id: number; depth: number }[]) : [{ id: firstId, depth: 0 }];
  if (topRows.length === 0) throw await diagnose(svc, owner, planned, parent, notFound, typeIds, materialIds, null);

  const [types, materials] = results.slice(results.length - 2) as { id: number; name: string }[][];
  const typeNames = new Map(types!.map((row) => [row.id, row.name]));
  const materialNames = new Map(materials!.map((row) => [row.id, row.name]));
  const videoResults = results.slice(results.length - 2 - videoInputs.length, results.length - 2) as {
    id: number;
  }[][];
  const topDepth = topRows[0]!.depth;

  const rows: RecordRow[] = [];
  const bom: CreatedRecords["bom"] = new Map();
  planned.forEach((p, index) => {
    const { input: record } = p;
    const id = firstId + index;
    const parentId = p.parent === null ? (parent?.id ?? null) : firstId + p.parent;
    const dims = [record.height_cm, record.width_cm, record.depth_cm];
    rows.push({
      id,
      parent_id: parentId,
      owner_id: owner.id,
      owner_username: owner.username,
      owner_visibility: owner.profileVisibility,
      name: record.name,
      description: record.description ?? null,
      brand: normalizeBrand(record.brand),
      model: record.model ?? null,
      weight_g: record.weight_g ?? null,
      height_cm: record.height_cm ?? null,
      width_cm: record.width_cm ?? null,
      depth_cm: record.depth_cm ?? null,
      volume_cm3: dims.every((d) => typeof d === "number") ? dims[0]! * dims[1]! * dims[2]! : null,
      circularity_properties: normalizeCircularity(record.circularity_properties),
      product_type_id: record.product_type_id ?? null,
      product_type_name: record.product_type_id ? (typeNames.get(record.product_type_id) ?? null) : null,
      amount_in_parent: parentId === null ? null : "amount_in_parent" in record ? record.amount_in_parent : null,
      depth: topDepth + p.depth,
      version: 1,
      created_at: now,
      updated_at: now,
      quality_score: scores.get(id)!,
    });
    const entries = (record.bill_of_materials ?? []).map((entry) => ({
      material_id: entry.material_id,
      material_name: materialNames.get(entry.material_id)!,
      quantity: entry.quantity,
      unit: entry.unit,
    }));
    bom.set(
      id,
      entries.sort((a, b) => a.material_name.localeCompare(b.material_name) || a.material_id - b.material_id),
    );
  });
  const videos = videoInputs.map((video, i) => ({
    id: videoResults[i]![0]!.id,
    url: video.url,
    title: video.title ?? null,
    description: video.description ?? null,
    video_metadata: video.video_metadata ? JSON.stringify(video.video_metadata) : null,
    created_at: now,
  }));
  return { rows, bom, videos };
}

/**
 * Why a create was refused by the database: someone else's or a missing parent (404), a component
 * too deep (400), unknown product types or materials (422, each pointed at). One round trip, only
 * on the error path. Returns the original error if it finds nothing wrong.
 */
async function diagnose(
  svc: Pick<Services, "db">,
  owner: SessionUser,
  planned: Planned[],
  parent: CreateParent | null,
  notFound: () => ApiError,
  typeIds: number[],
  materialIds: number[],
  original: unknown,
): Promise<unknown> {
  const [parentRows, typeRows, materialRows] = await batchRows<
    [{ owner_id: number; depth: number }, { id: number; name: string }, { id: number; name: string }]
  >(svc.db, [
    parent
      ? sql`SELECT p.owner_id, p.depth FROM products p WHERE p.id = ${parent.id} AND ${kindCondition(parent.kind)}`
      : sql`SELECT 1 WHERE 0`,
    existingIdsStatement("product_types", typeIds),
    existingIdsStatement("materials", materialIds),
  ]);
  let baseDepth = 0;
  if (parent) {
    const row = parentRows[0];
    assertMayModify(owner, row ? { ownerId: row.owner_id } : null, notFound, "add");
    baseDepth = row!.depth + 1;
  }
  const culprit = planned.find((p) => p.depth + baseDepth > MAX_COMPONENT_DEPTH);
  if (culprit) return tooDeep(culprit.pointer, culprit.depth + baseDepth);
  const types = new Set(typeRows.map((row) => row.id));
  const materials = new Set(materialRows.map((row) => row.id));
  const errors: FieldError[] = [];
  for (const p of planned) {
    if (p.input.product_type_id && !types.has(p.input.product_type_id)) {
      errors.push({ pointer: `${p.pointer}/product_type_id`, detail: "No product type has this id." });
    }
    (p.input.bill_of_materials ?? []).forEach((entry, i) => {
      if (!materials.has(entry.material_id)) {
        errors.push({ pointer: `${p.pointer}/bill_of_materials/${i}/material_id`, detail: "No material has this id." });
      }
    });
  }
  if (errors.length > 0)
    return new ApiError(422, { code: "VALIDATION_FAILED", detail: "The request names records that do not exist.", errors });
  return original ?? notFound();
}
