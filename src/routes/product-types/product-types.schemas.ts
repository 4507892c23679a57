import { z } from "@hono/zod-openapi";
import { multilineText, singleLineText } from "../../lib/text";
import { LinkedCategorySchema } from "../materials/materials.schemas";

const timestamp = z.string().openapi({ example: "2026-05-01T12:00:00Z" });

const productTypeFields = {
  id: z.number().int(),
  name: z.string(),
  description: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
};

const EXAMPLE = {
  id: 4,
  name: "Smartphone",
  description: "Handheld mobile phones with a touch screen.",
  created_at: "2026-05-01T12:00:00Z",
  updated_at: "2026-05-01T12:00:00Z",
};

export const ProductTypeSchema = z.object(productTypeFields).openapi("ProductType", { example: EXAMPLE });

export const ProductTypeDetailSchema = z
  .object({ ...productTypeFields, categories: z.array(LinkedCategorySchema).openapi({ description: "Linked categories, by name." }) })
  .openapi("ProductTypeDetail", { example: { ...EXAMPLE, categories: [{ id: 31, name: "Mobile phones", taxonomy_id: 1 }] } });

const writable = {
  name: singleLineText().trim().min(2).max(100).openapi({ description: "2 to 100 characters, unique.", example: "Smartphone" }),
  description: multilineText().max(500).nullable().optional().openapi({ example: "Handheld mobile phones with a touch screen." }),
};

export const ProductTypeCreateSchema = z.strictObject(writable).openapi("ProductTypeCreate", { example: { name: "Smartphone" } });

export const ProductTypeUpdateSchema = z
  .strictObject({ ...writable, name: writable.name.optional() })
  .openapi("ProductTypeUpdate", { description: "Members left out stay as they are.", example: { description: "Phones." } });
