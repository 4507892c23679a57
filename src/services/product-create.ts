import { type SQL, sql } from "drizzle-orm";
import type { SessionUser } from "./sessions";
import { batchRows, type Db } from "../db/client";
import { ApiError, type FieldError } from "../lib/problem";
import {
  type ComponentCreate,
  MAX_COMPONENT_DEPTH,
  type ProductCreate,
} from "../routes/products/products.schemas";
import { assertMayModify } from "../auth/permissions";
import { existingIdStatements, kindCondition, type RecordKind, type RecordRow, reserveIdsStatement } from "./product-records";
import { normalizeCircularity, normalizeBrand } from "./product-fields";

/** At most this many components in one create body (the same bound as a tree read). */
export const MAX_COMPONENTS_PER_CREATE = 1000;

/** Where components are being created: under a record of this kind, which the caller must own. */
export interface CreateParent {
  id: number;
  kind: RecordKind;
}

interface PlannedRecord {
  id: number;
  parentId: number | null;
  depth: number;
  input: ProductCreate | ComponentCreate;
  pointer: string;
}

export interface CreatedRecords {
  rows: RecordRow[];
  bom: Map<number, { material_id: number; material_name: string; quantity: number; unit: string }[]>;
  videos: { id: number; url: string; title: string | null; description: string | null; video_metadata: string | null; created_at: number }[];
}

/**
 * Creates a base product (parent null) or a component under `parent`, with every nested component,
 * bill of materials and video, in two round trips: one batch that looks up the parent, reserves
 * the ids and looks up the product types and materials named, then one atomic batch of every row.
 * Someone else's parent is 404, as if it did not exist. Returns the created
 * rows as the read statements would select them, built from what is known, not read back.
 */
export async function createRecords(
  db: Db,
  owner: SessionUser,
  input: ProductCreate | ComponentCreate,
  parent: CreateParent | null,
  notFound: () => ApiError,
): Promise<CreatedRecords> {
  const planned: Omit<PlannedRecord, "id">[] = [];
  // Depths are relative to the new top record until the parent's own depth is known.
  const walk = (node: ProductCreate | ComponentCreate, parentIndex: number | null, depth: number, pointer: string) => {
    const index = planned.length;
    planned.push({ parentId: parentIndex, depth, input: node, pointer });
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

  const typeIds = [...new Set(planned.flatMap((p) => (p.input.product_type_id ? [p.input.product_type_id] : [])))];
  const materialIds = [...new Set(planned.flatMap((p) => (p.input.bill_of_materials ?? []).map((e) => e.material_id)))];
  const typeStatements = existingIdStatements("product_types", typeIds);
  const materialStatements = existingIdStatements("materials", materialIds);
  const [parentRows, reserved, ...lookups] = await batchRows<
    [{ owner_id: number; depth: number }, { first_id: number }, ...{ id: number; name: string }[]]
  >(db, [
    parent ? sql`SELECT p.owner_id, p.depth FROM products p WHERE p.id = ${parent.id} AND ${kindCondition(parent.kind)}` : sql`SELECT 1 WHERE 0`,
    reserveIdsStatement(planned.length),
    ...typeStatements,
    ...materialStatements,
  ] as [SQL, SQL, ...SQL[]]);
  let baseDepth = 0;
  if (parent) {
    const row = parentRows[0];
    const owned = row ? { ownerId: row.owner_id } : null;
    assertMayModify(owner, owned, notFound);
    baseDepth = row!.depth + 1;
  }
  const deepest = planned.reduce((max, p) => Math.max(max, p.depth), 0) + baseDepth;
  if (deepest > MAX_COMPONENT_DEPTH) {
    const culprit = planned.find((p) => p.depth + baseDepth > MAX_COMPONENT_DEPTH)!;
    throw new ApiError(400, {
      code: "COMPONENT_TOO_DEEP",
      detail: `Components nest at most ${MAX_COMPONENT_DEPTH} levels below a base product; ${culprit.pointer || "this component"} would be at level ${culprit.depth + baseDepth}.`,
    });
  }
  const typeNames = new Map(lookups.slice(0, typeStatements.length).flat().map((row) => [row.id, row.name]));
  const materialNames = new Map(lookups.slice(typeStatements.length).flat().map((row) => [row.id, row.name]));

  const errors: FieldError[] = [];
  planned.forEach((p) => {
    if (p.input.product_type_id && !typeNames.has(p.input.product_type_id)) {
      errors.push({ pointer: `${p.pointer}/product_type_id`, detail: "No product type has this id." });
    }
    (p.input.bill_of_materials ?? []).forEach((entry, i) => {
      if (!materialNames.has(entry.material_id)) {
        errors.push({ pointer: `${p.pointer}/bill_of_materials/${i}/material_id`, detail: "No material has this id." });
      }
    });
  });
  if (errors.length > 0) {
    throw new ApiError(422, { code: "VALIDATION_FAILED", detail: "The request names records that do not exist.", errors });
  }

  const firstId = reserved[0]!.first_id;
  const now = Math.floor(Date.now() / 1000);
  const records: PlannedRecord[] = planned.map((p, i) => ({ ...p, id: firstId + i, parentId: null, depth: p.depth + baseDepth }));
  planned.forEach((p, i) => {
    records[i]!.parentId = p.parentId === null ? (parent?.id ?? null) : firstId + p.parentId;
  });

  const statements: SQL[] = [];
  const rows: RecordRow[] = [];
  const bom: CreatedRecords["bom"] = new Map();
  for (const record of records) {
    const { input } = record;
    const circularity = normalizeCircularity(input.circularity_properties);
    const brand = normalizeBrand(input.brand);
    const amount = "amount_in_parent" in input ? input.amount_in_parent : null;
    statements.push(sql`INSERT INTO products (id, parent_id, owner_id, name, description, brand, model, weight_g, height_cm,
        width_cm, depth_cm, circularity_properties, product_type_id, amount_in_parent, depth, created_at, updated_at)
      VALUES (${record.id}, ${record.parentId}, ${owner.id}, ${input.name}, ${input.description ?? null}, ${brand},
        ${input.model ?? null}, ${input.weight_g ?? null}, ${input.height_cm ?? null}, ${input.width_cm ?? null},
        ${input.depth_cm ?? null}, ${circularity}, ${input.product_type_id ?? null}, ${record.parentId === null ? null : amount},
        ${record.depth}, ${now}, ${now})`);
    const entries = (input.bill_of_materials ?? []).map((entry) => ({
      material_id: entry.material_id,
      material_name: materialNames.get(entry.material_id)!,
      quantity: entry.quantity,
      unit: entry.unit,
    }));
    for (const entry of entries) {
      statements.push(sql`INSERT INTO bill_of_materials (product_id, material_id, quantity, unit, created_at, updated_at)
        VALUES (${record.id}, ${entry.material_id}, ${entry.quantity}, ${entry.unit}, ${now}, ${now})`);
    }
    bom.set(record.id, entries.sort((a, b) => a.material_name.localeCompare(b.material_name) || a.material_id - b.material_id));
    const dims = [input.height_cm, input.width_cm, input.depth_cm];
    rows.push({
      id: record.id,
      parent_id: record.parentId,
      owner_id: owner.id,
      owner_username: owner.username,
      owner_visibility: owner.profileVisibility,
      name: input.name,
      description: input.description ?? null,
      brand,
      model: input.model ?? null,
      weight_g: input.weight_g ?? null,
      height_cm: input.height_cm ?? null,
      width_cm: input.width_cm ?? null,
      depth_cm: input.depth_cm ?? null,
      volume_cm3: dims.every((d) => typeof d === "number") ? dims[0]! * dims[1]! * dims[2]! : null,
      circularity_properties: circularity,
      product_type_id: input.product_type_id ?? null,
      product_type_name: input.product_type_id ? (typeNames.get(input.product_type_id) ?? null) : null,
      amount_in_parent: record.parentId === null ? null : amount,
      depth: record.depth,
      version: 1,
      created_at: now,
      updated_at: now,
    });
  }
  const videoInputs = "videos" in input ? (input.videos ?? []) : [];
  const videoStatements = videoInputs.map(
    (video) => sql`INSERT INTO videos (product_id, url, title, description, video_metadata, created_at, updated_at)
      VALUES (${firstId}, ${video.url}, ${video.title ?? null}, ${video.description ?? null},
        ${video.video_metadata ? JSON.stringify(video.video_metadata) : null}, ${now}, ${now}) RETURNING id`,
  );
  const results = await batchRows<unknown[]>(db, [...statements, ...videoStatements]);
  const videoIds = results.slice(statements.length) as { id: number }[][];
  const videos = videoInputs.map((video, i) => ({
    id: videoIds[i]![0]!.id,
    url: video.url,
    title: video.title ?? null,
    description: video.description ?? null,
    video_metadata: video.video_metadata ? JSON.stringify(video.video_metadata) : null,
    created_at: now,
  }));
  return { rows, bom, videos };
}
