import { createRoute, z } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../../lib/openapi";
import { problemResponses } from "../../../lib/problem";
import { authenticate } from "../../../middleware/authenticate";
import { IdParamsSchema } from "../../../schemas/params";
import { MAX_BOM_ENTRIES } from "../../../services/products/bill-of-materials";
import { UNIT_CODES } from "../../../services/products/fields";
import type { RecordKind } from "../../../services/products/records";
import { BomEntryInputSchema, BomEntrySchema } from "../products.schemas";

/** Path parameters of one entry: the record id and the material id. */
export const MaterialParamsSchema = IdParamsSchema.extend({
  material_id: z.coerce
    .number()
    .int()
    .positive()
    .openapi({ param: { name: "material_id", in: "path" }, example: 3 }),
});

/** A whole bill of materials, as the list routes answer it. */
export const BomListSchema = z.array(BomEntrySchema).openapi("BillOfMaterials", {
  description: "A record's bill of materials: a plain array (at most 100 entries), ordered by material name.",
  example: [{ material_id: 3, material_name: "Polypropylene", quantity: 0.25, unit: "kg" }],
});

/** Body of POST on the list: 1..100 entries, each material once (a repeat is 422 at `/<index>/material_id`). */
export const BomAddListSchema = z
  .array(BomEntryInputSchema)
  .min(1)
  .max(MAX_BOM_ENTRIES)
  .superRefine((entries, ctx) => {
    const seen = new Set<number>();
    entries.forEach((entry, i) => {
      if (seen.has(entry.material_id))
        ctx.addIssue({ code: "custom", path: [i, "material_id"], message: "Each material may appear once per record." });
      seen.add(entry.material_id);
    });
  })
  .openapi("BillOfMaterialsAdd", {
    description: "1 to 100 entries, each material once; `unit` defaults to `kg`.",
    example: [
      { material_id: 3, quantity: 0.25, unit: "kg" },
      { material_id: 5, quantity: 40, unit: "g" },
    ],
  });

/** Body of POST on one entry: the material is in the path. */
export const BomQuantitySchema = z
  .strictObject({ quantity: BomEntryInputSchema.shape.quantity, unit: BomEntryInputSchema.shape.unit })
  .openapi("BillOfMaterialsQuantity", { description: "`unit` defaults to `kg`.", example: { quantity: 0.25, unit: "kg" } });

/** Body of PATCH on one entry: members left out stay as they are. */
export const BomQuantityUpdateSchema = z
  .strictObject({ quantity: BomEntryInputSchema.shape.quantity.optional(), unit: z.enum(UNIT_CODES).optional() })
  .openapi("BillOfMaterialsQuantityUpdate", { description: "Members left out stay as they are.", example: { quantity: 0.3 } });

/** Body of DELETE on the list: the material ids whose entries go. */
export const MaterialIdListSchema = z
  .array(z.number().int().positive())
  .min(1)
  .max(MAX_BOM_ENTRIES)
  .openapi("MaterialIdList", { description: "1 to 100 material ids.", example: [3, 5] });

const json = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const PREFIX = { product: "/products", component: "/components" } as const;
const NAME = { product: "Product", component: "Component" } as const;
const NOUN = { product: "base product", component: "component" } as const;
const WRITE =
  "Needs a verified account (403 otherwise); someone else's record is 404. Does not change the record's `version` or `updated_at`.";

/** The seven bill-of-materials routes of one kind of record: under `/products/{id}` or `/components/{id}`. */
export function bomRoutes(kind: RecordKind) {
  const base = `${PREFIX[kind]}/{id}/materials` as const;
  const one = `${base}/{material_id}` as const;
  const [name, noun] = [NAME[kind], NOUN[kind]];
  const other = kind === "product" ? "a component id" : "a base product id";
  return {
    list: createRoute({
      method: "get",
      path: base,
      operationId: `list${name}Materials`,
      tags: ["Products"],
      summary: `Read the bill of materials of a ${noun}`,
      description: `Public. The whole bill of materials as a plain array (no paging: at most 100 entries). Unknown id or ${other}: 404. Sends an \`ETag\` and answers \`If-None-Match\` with 304.`,
      request: { params: IdParamsSchema },
      responses: {
        200: { description: "The entries, by material name.", content: { "application/json": { schema: BomListSchema } } },
        304: { description: "Unchanged since the `If-None-Match` ETag." },
        ...problemResponses(404, 422),
      },
    }),
    add: createRoute({
      method: "post",
      path: base,
      operationId: `add${name}Materials`,
      tags: ["Products"],
      summary: `Add entries to the bill of materials of a ${noun}`,
      description:
        "Adds 1 to 100 entries, all or none. Unknown material: 422 at `/<index>/material_id`; a material twice in the list: 422; " +
        "a material already in the bill: 409 `BOM_ENTRY_EXISTS` naming it; more than 100 entries in all: 409 `BOM_FULL`. " +
        `Answers with the whole bill of materials. ${WRITE}`,
      security: SIGNED_IN,
      middleware: [authenticate("required")] as const,
      request: { params: IdParamsSchema, body: json(BomAddListSchema) },
      responses: {
        201: { description: "Added; the whole bill of materials.", content: { "application/json": { schema: BomListSchema } } },
        ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422),
      },
    }),
    removeMany: createRoute({
      method: "delete",
      path: base,
      operationId: `remove${name}Materials`,
      tags: ["Products"],
      summary: `Remove entries from the bill of materials of a ${noun}`,
      description: `Removes the entries of the material ids in the JSON body (an array of 1 to 100 ids). Ids not in the bill are ignored, so a retry is harmless. ${WRITE}`,
      security: SIGNED_IN,
      middleware: [authenticate("required")] as const,
      request: { params: IdParamsSchema, body: json(MaterialIdListSchema) },
      responses: { 204: { description: "Removed." }, ...problemResponses(400, 401, 403, 404, 413, 415, 422) },
    }),
    get: createRoute({
      method: "get",
      path: one,
      operationId: `get${name}Material`,
      tags: ["Products"],
      summary: `Read one bill-of-materials entry of a ${noun}`,
      description: `Public. 404 when the record does not exist (or is ${other}) or the material is not in its bill. Sends an \`ETag\`; \`If-None-Match\` answers 304.`,
      request: { params: MaterialParamsSchema },
      responses: {
        200: { description: "The entry.", content: { "application/json": { schema: BomEntrySchema } } },
        304: { description: "Unchanged since the `If-None-Match` ETag." },
        ...problemResponses(404, 422),
      },
    }),
    addOne: createRoute({
      method: "post",
      path: one,
      operationId: `add${name}Material`,
      tags: ["Products"],
      summary: `Add one material to the bill of materials of a ${noun}`,
      description: `Adds the material of the path with the body's quantity and unit. Unknown material: 422 at \`#/path/material_id\`; already in the bill: 409 \`BOM_ENTRY_EXISTS\`; bill full: 409 \`BOM_FULL\`. ${WRITE}`,
      security: SIGNED_IN,
      middleware: [authenticate("required")] as const,
      request: { params: MaterialParamsSchema, body: json(BomQuantitySchema) },
      responses: {
        201: { description: "Added; `Location` names the entry.", content: { "application/json": { schema: BomEntrySchema } } },
        ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422),
      },
    }),
    update: createRoute({
      method: "patch",
      path: one,
      operationId: `update${name}Material`,
      tags: ["Products"],
      summary: `Change one bill-of-materials entry of a ${noun}`,
      description: `Changes the quantity and/or unit of the entry (no \`If-Match\`: entries carry no version). Not in the bill: 404. ${WRITE}`,
      security: SIGNED_IN,
      middleware: [authenticate("required")] as const,
      request: { params: MaterialParamsSchema, body: json(BomQuantityUpdateSchema) },
      responses: {
        200: { description: "The entry as it now is.", content: { "application/json": { schema: BomEntrySchema } } },
        ...problemResponses(400, 401, 403, 404, 413, 415, 422),
      },
    }),
    removeOne: createRoute({
      method: "delete",
      path: one,
      operationId: `remove${name}Material`,
      tags: ["Products"],
      summary: `Remove one material from the bill of materials of a ${noun}`,
      description: `Not in the bill: 404. ${WRITE}`,
      security: SIGNED_IN,
      middleware: [authenticate("required")] as const,
      request: { params: MaterialParamsSchema },
      responses: { 204: { description: "Removed." }, ...problemResponses(401, 403, 404, 422) },
    }),
  };
}

export type BomRoutes = ReturnType<typeof bomRoutes>;
