import { createRoute } from "@hono/zod-openapi";
import { problemResponses } from "../../../lib/problem";
import { cachedRead } from "../../../middleware/read-copies";
import { IdParamsSchema } from "../../../schemas/params";
import { RecordQualitySchema } from "./quality.schemas";

const PUBLIC =
  "Public, like the record. Current with every write (its own fields, its components, bill of materials and images; " +
  "pending and rejected images do not count). Sends an `ETag` and answers `If-None-Match` with 304 (docs/quality.md).";

export const getProductQuality = createRoute({
  method: "get",
  path: "/products/{id}/quality",
  operationId: "getProductQuality",
  tags: ["Products"],
  summary: "Quality checks of a base product and its tree",
  description:
    "Every quality check of the base product (`pass`, `fail` or `not_applicable`, with a detail naming the numbers), its " +
    `score, and a summary of its whole component tree: records, failures per check, the 20 lowest scores (a component id: 404). ${PUBLIC}`,
  middleware: [cachedRead("record")] as const,
  request: { params: IdParamsSchema },
  responses: {
    200: { description: "The product's quality.", content: { "application/json": { schema: RecordQualitySchema } } },
    304: { description: "Unchanged since the `If-None-Match` ETag." },
    ...problemResponses(404, 422, 503),
  },
});

export const getComponentQuality = createRoute({
  method: "get",
  path: "/components/{id}/quality",
  operationId: "getComponentQuality",
  tags: ["Products"],
  summary: "Quality checks of a component",
  description: `Every quality check of the component and its score; no tree summary (a base product id: 404). ${PUBLIC}`,
  middleware: [cachedRead("record")] as const,
  request: { params: IdParamsSchema },
  responses: {
    200: { description: "The component's quality.", content: { "application/json": { schema: RecordQualitySchema } } },
    304: { description: "Unchanged since the `If-None-Match` ETag." },
    ...problemResponses(404, 422, 503),
  },
});
