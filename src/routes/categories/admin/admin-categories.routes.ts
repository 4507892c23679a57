import { createRoute, z } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../../lib/openapi";
import { problemResponses } from "../../../lib/problem";
import { multilineText, singleLineText } from "../../../lib/text";
import { IdParamsSchema } from "../../../schemas/params";
import { ADMIN_ONLY, deleteResponses, json, jsonAnswer, WRITE_EFFECTS } from "../../reference/reference-admin";
import { CategorySchema } from "../categories.schemas";

// No `authenticate` here: `adminOnly` (app.ts) guards all of /v1/admin/* before these run.

const name = singleLineText().trim().min(1).max(100).openapi({ description: "1 to 100 characters.", example: "Coffee machines" });
const description = multilineText().max(1000).nullable().optional().openapi({ example: "Espresso, filter and capsule machines." });
const externalId = singleLineText()
  .trim()
  .min(1)
  .max(100)
  .nullable()
  .optional()
  .openapi({ description: "The category's id in its source; unique within the taxonomy (taken: 409).", example: "EEE-2.4" });
const id = (description: string) => z.number().int().positive().openapi({ description, example: 10 });

export const CategoryCreateSchema = z
  .strictObject({
    name,
    description,
    external_id: externalId,
    taxonomy_id: id("For a top-level category: its taxonomy.").optional(),
    supercategory_id: id("For a subcategory: the category it sits below; the taxonomy is that category's.").optional(),
  })
  .superRefine((body, ctx) => {
    if (body.taxonomy_id !== undefined && body.supercategory_id !== undefined) {
      ctx.addIssue({ code: "custom", path: ["supercategory_id"], message: "Give taxonomy_id or supercategory_id, not both." });
    } else if (body.taxonomy_id === undefined && body.supercategory_id === undefined) {
      ctx.addIssue({ code: "custom", path: [], message: "Give taxonomy_id (a top-level category) or supercategory_id (a subcategory)." });
    }
  })
  .openapi("CategoryCreate", {
    description: "Exactly one of `taxonomy_id` (a top-level category) and `supercategory_id` (a subcategory).",
    example: { name: "Coffee machines", supercategory_id: 12, external_id: "EEE-2.4" },
  });

export const CategoryUpdateSchema = z
  .strictObject({
    name: name.optional(),
    description,
    external_id: externalId,
    supercategory_id: id("Moves the category (with its subtree) below another category of its taxonomy; `null` moves it to the top.")
      .nullable()
      .optional(),
  })
  .openapi("CategoryUpdate", {
    description: "Members to change; absent ones stay. The taxonomy cannot change.",
    example: { supercategory_id: 10 },
  });

const category = jsonAnswer(CategorySchema);
const NOT_FOUND = "An unknown category id: 404 `CATEGORY_NOT_FOUND`.";

export const createCategory = createRoute({
  method: "post",
  path: "/admin/categories",
  operationId: "adminCreateCategory",
  tags: ["Admin"],
  summary: "Create a category",
  description:
    "Creates a top-level category of `taxonomy_id`, or a subcategory of `supercategory_id` (it takes that category's " +
    "taxonomy); both or neither: 422, an unknown one: 422 pointing at it. An `external_id` another category of the " +
    `taxonomy has: 409 \`CATEGORY_EXTERNAL_ID_TAKEN\`. ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { body: json(CategoryCreateSchema) },
  responses: {
    201: category("Created; `Location` names it."),
    ...problemResponses(401, 403, 409, 413, 415, 422),
  },
});

export const updateCategory = createRoute({
  method: "patch",
  path: "/admin/categories/{id}",
  operationId: "adminUpdateCategory",
  tags: ["Admin"],
  summary: "Update a category",
  description:
    "Renames, describes or moves a category. A move below the category itself or one of its subcategories is 400 " +
    "`CATEGORY_CYCLE`; below a category of another taxonomy 400 `CATEGORY_TAXONOMY_MISMATCH`; below an unknown one 422. " +
    `A taken \`external_id\`: 409 \`CATEGORY_EXTERNAL_ID_TAKEN\`. ${NOT_FOUND} ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: IdParamsSchema, body: json(CategoryUpdateSchema) },
  responses: {
    200: category("The updated category."),
    ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422),
  },
});

export const deleteCategory = createRoute({
  method: "delete",
  path: "/admin/categories/{id}",
  operationId: "adminDeleteCategory",
  tags: ["Admin"],
  summary: "Delete a category",
  description: `Deletes the category with its whole subtree and their links to materials and product types. ${NOT_FOUND} ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: IdParamsSchema },
  responses: deleteResponses(),
});
