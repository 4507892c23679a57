import { createRoute } from "@hono/zod-openapi";
import { pagedSchema } from "../../lib/pagination";
import { problemResponses } from "../../lib/problem";
import { cacheResponse } from "../../middleware/kv-cache";
import { IdParamsSchema } from "../../schemas/params";
import { CACHED_READ } from "../reference/reference-http";
import { NoQuerySchema } from "../reference/reference-query";
import { ProductTypeListQuerySchema } from "./product-types.query";
import { ProductTypeDetailSchema, ProductTypeSchema } from "./product-types.schemas";

export const listProductTypes = createRoute({
  method: "get",
  path: "/product-types",
  operationId: "listProductTypes",
  tags: ["Reference data"],
  summary: "List product types",
  description:
    "One page of product types (without their categories; read one for those), filtered and ordered as the parameters say; " +
    `unknown or malformed parameters 422. ${CACHED_READ}`,
  middleware: [cacheResponse("reference-data")] as const,
  request: { query: ProductTypeListQuerySchema },
  responses: {
    200: {
      description: "A page of product types.",
      content: { "application/json": { schema: pagedSchema(ProductTypeSchema, "ProductTypePage") } },
    },
    ...problemResponses(422),
  },
});

export const getProductType = createRoute({
  method: "get",
  path: "/product-types/{id}",
  operationId: "getProductType",
  tags: ["Reference data"],
  summary: "Read a product type",
  description: `A product type with the categories it is linked to. An unknown id: 404 \`PRODUCT_TYPE_NOT_FOUND\`. ${CACHED_READ}`,
  middleware: [cacheResponse("reference-data")] as const,
  request: { params: IdParamsSchema, query: NoQuerySchema },
  responses: {
    200: { description: "The product type.", content: { "application/json": { schema: ProductTypeDetailSchema } } },
    ...problemResponses(404, 422),
  },
});
