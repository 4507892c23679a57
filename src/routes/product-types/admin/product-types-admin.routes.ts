import { createRoute } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../../lib/openapi";
import { problemResponses } from "../../../lib/problem";
import { IdParamsSchema } from "../../../schemas/params";
import { ADMIN_ONLY, categoryLinkRoutes, deleteResponses, json, jsonAnswer, WRITE_EFFECTS } from "../../reference/reference-admin";
import { ProductTypeCreateSchema, ProductTypeDetailSchema, ProductTypeUpdateSchema } from "../product-types.schemas";

const NOT_FOUND = "An unknown id: 404 `PRODUCT_TYPE_NOT_FOUND`.";
const detail = jsonAnswer(ProductTypeDetailSchema);

export const createProductType = createRoute({
  method: "post",
  path: "/admin/product-types",
  operationId: "adminCreateProductType",
  tags: ["Admin"],
  summary: "Create a product type",
  description:
    "Creates a product type (no categories yet: link them with `POST /v1/admin/product-types/{id}/categories`). A name " +
    `another product type has: 409 \`PRODUCT_TYPE_NAME_TAKEN\`. ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { body: json(ProductTypeCreateSchema) },
  responses: { 201: detail("Created; `Location` names it."), ...problemResponses(401, 403, 409, 413, 415, 422) },
});

export const updateProductType = createRoute({
  method: "patch",
  path: "/admin/product-types/{id}",
  operationId: "adminUpdateProductType",
  tags: ["Admin"],
  summary: "Update a product type",
  description:
    "Changes the members given; `updated_at` moves only when a value changes. A name another product type has: 409 " +
    `\`PRODUCT_TYPE_NAME_TAKEN\`. ${NOT_FOUND} ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: IdParamsSchema, body: json(ProductTypeUpdateSchema) },
  responses: { 200: detail("The updated product type with its categories."), ...problemResponses(401, 403, 404, 409, 413, 415, 422) },
});

export const deleteProductType = createRoute({
  method: "delete",
  path: "/admin/product-types/{id}",
  operationId: "adminDeleteProductType",
  tags: ["Admin"],
  summary: "Delete a product type",
  description:
    "Deletes a product type and its category links. Products and components of this type stay, without a type " +
    `(\`product_type_id: null\`; their \`version\` is unchanged). ${NOT_FOUND} ${WRITE_EFFECTS} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: IdParamsSchema },
  responses: deleteResponses(),
});

export const { addCategories: addProductTypeCategories, removeCategory: removeProductTypeCategory } = categoryLinkRoutes({
  base: "/admin/product-types",
  stem: "ProductType",
  what: "product type",
  notFoundCode: "PRODUCT_TYPE_NOT_FOUND",
  detail: ProductTypeDetailSchema,
});
