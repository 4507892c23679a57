import { createRoute } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../../lib/openapi";
import { problemResponses } from "../../../lib/problem";
import { IdParamsSchema } from "../../../schemas/params";
import { ADMIN_ONLY, categoryLinkRoutes, deleteResponses, json, jsonAnswer, WRITE_EFFECTS } from "../../reference/reference-admin";
import { MaterialCreateSchema, MaterialDetailSchema, MaterialUpdateSchema } from "../materials.schemas";

const NOT_FOUND = "An unknown id: 404 `MATERIAL_NOT_FOUND`.";
const detail = jsonAnswer(MaterialDetailSchema);

export const createMaterial = createRoute({
  method: "post",
  path: "/admin/materials",
  operationId: "adminCreateMaterial",
  tags: ["Admin"],
  summary: "Create a material",
  description:
    "Creates a material (no categories yet: link them with `POST /v1/admin/materials/{id}/categories`). A density of 0 or " +
    `less is 422; a name another material has, 409 \`MATERIAL_NAME_TAKEN\`. ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { body: json(MaterialCreateSchema) },
  responses: {
    201: detail("Created; `Location` names it."),
    ...problemResponses(401, 403, 409, 413, 415, 422),
  },
});

export const updateMaterial = createRoute({
  method: "patch",
  path: "/admin/materials/{id}",
  operationId: "adminUpdateMaterial",
  tags: ["Admin"],
  summary: "Update a material",
  description:
    "Changes the members given (`density_kg_m3: null` forgets the density); `updated_at` moves only when a value changes. " +
    `A name another material has: 409 \`MATERIAL_NAME_TAKEN\`. ${NOT_FOUND} ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: IdParamsSchema, body: json(MaterialUpdateSchema) },
  responses: { 200: detail("The updated material with its categories."), ...problemResponses(401, 403, 404, 409, 413, 415, 422) },
});

export const deleteMaterial = createRoute({
  method: "delete",
  path: "/admin/materials/{id}",
  operationId: "adminDeleteMaterial",
  tags: ["Admin"],
  summary: "Delete a material",
  description:
    "Deletes a material and its category links. A material still named by any bill of materials is kept: 409 " +
    `\`MATERIAL_IN_USE\` (remove it from those bills first). ${NOT_FOUND} ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: IdParamsSchema },
  responses: deleteResponses(409),
});

export const { addCategories: addMaterialCategories, removeCategory: removeMaterialCategory } = categoryLinkRoutes({
  base: "/admin/materials",
  stem: "Material",
  what: "material",
  notFoundCode: "MATERIAL_NOT_FOUND",
  detail: MaterialDetailSchema,
});
