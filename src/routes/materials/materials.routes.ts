import { createRoute } from "@hono/zod-openapi";
import { pagedSchema } from "../../lib/pagination";
import { problemResponses } from "../../lib/problem";
import { cacheResponse } from "../../middleware/kv-cache";
import { IdParamsSchema } from "../../schemas/params";
import { CACHED_READ } from "../reference/reference-http";
import { NoQuerySchema } from "../reference/reference-query";
import { MaterialListQuerySchema } from "./materials.query";
import { MaterialDetailSchema, MaterialSchema } from "./materials.schemas";

export const listMaterials = createRoute({
  method: "get",
  path: "/materials",
  operationId: "listMaterials",
  tags: ["Reference data"],
  summary: "List materials",
  description:
    "One page of materials (without their categories; read one for those), filtered and ordered as the parameters say; " +
    `unknown or malformed parameters 422. ${CACHED_READ}`,
  middleware: [cacheResponse("reference-data")] as const,
  request: { query: MaterialListQuerySchema },
  responses: {
    200: { description: "A page of materials.", content: { "application/json": { schema: pagedSchema(MaterialSchema, "MaterialPage") } } },
    ...problemResponses(422),
  },
});

export const getMaterial = createRoute({
  method: "get",
  path: "/materials/{id}",
  operationId: "getMaterial",
  tags: ["Reference data"],
  summary: "Read a material",
  description: `A material with the categories it is linked to. An unknown id: 404 \`MATERIAL_NOT_FOUND\`. ${CACHED_READ}`,
  middleware: [cacheResponse("reference-data")] as const,
  request: { params: IdParamsSchema, query: NoQuerySchema },
  responses: {
    200: { description: "The material.", content: { "application/json": { schema: MaterialDetailSchema } } },
    ...problemResponses(404, 422),
  },
});
