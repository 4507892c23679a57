import { z } from "@hono/zod-openapi";
import { multilineText, singleLineText } from "../../lib/text";

// Request and response shapes of materials; the category-link shapes are shared with product types.

const timestamp = z.string().openapi({ example: "2026-05-01T12:00:00Z" });

export const LinkedCategorySchema = z
  .object({ id: z.number().int(), name: z.string(), taxonomy_id: z.number().int() })
  .openapi("LinkedCategory", {
    description: "A category a material or product type is linked to.",
    example: { id: 12, name: "Polymers", taxonomy_id: 2 },
  });

export const CategoryLinksAddSchema = z
  .strictObject({
    category_ids: z
      .array(z.number().int().positive())
      .min(1)
      .max(100)
      .openapi({ description: "1 to 100 category ids, of any taxonomy; links the record already has are kept." }),
  })
  .openapi("CategoryLinksAdd", { example: { category_ids: [12, 15] } });

export const CategoryLinkParamsSchema = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .openapi({ param: { name: "id", in: "path" }, example: 3 }),
  category_id: z.coerce
    .number()
    .int()
    .positive()
    .openapi({ param: { name: "category_id", in: "path" }, example: 12 }),
});

const materialFields = {
  id: z.number().int(),
  name: z.string(),
  description: z.string().nullable(),
  density_kg_m3: z.number().nullable().openapi({ description: "Density in kg/m³, > 0; null when unknown." }),
  is_crm: z.boolean().openapi({ description: "On the EU list of critical raw materials." }),
  created_at: timestamp,
  updated_at: timestamp,
};

const MATERIAL_EXAMPLE = {
  id: 3,
  name: "Polypropylene",
  description: "A thermoplastic polymer.",
  density_kg_m3: 905,
  is_crm: false,
  created_at: "2026-05-01T12:00:00Z",
  updated_at: "2026-05-01T12:00:00Z",
};

export const MaterialSchema = z.object(materialFields).openapi("Material", { example: MATERIAL_EXAMPLE });

export const MaterialDetailSchema = z
  .object({ ...materialFields, categories: z.array(LinkedCategorySchema).openapi({ description: "Linked categories, by name." }) })
  .openapi("MaterialDetail", { example: { ...MATERIAL_EXAMPLE, categories: [{ id: 12, name: "Polymers", taxonomy_id: 2 }] } });

const writable = {
  name: singleLineText().trim().min(1).max(100).openapi({ description: "1 to 100 characters, unique.", example: "Polypropylene" }),
  description: multilineText().max(500).nullable().optional().openapi({ example: "A thermoplastic polymer." }),
  density_kg_m3: z
    .number()
    .positive()
    .max(100_000)
    .nullable()
    .optional()
    .openapi({ description: "Density in kg/m³: > 0 (at most 100,000); null for unknown.", example: 905 }),
  is_crm: z.boolean().optional().openapi({ description: "On the EU list of critical raw materials; default false." }),
};

export const MaterialCreateSchema = z
  .strictObject(writable)
  .openapi("MaterialCreate", { example: { name: "Polypropylene", density_kg_m3: 905, is_crm: false } });

export const MaterialUpdateSchema = z
  .strictObject({ ...writable, name: writable.name.optional() })
  .openapi("MaterialUpdate", { description: "Members left out stay as they are.", example: { density_kg_m3: 910 } });
