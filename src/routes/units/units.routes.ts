import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../lib/problem";
import { cacheResponse } from "../../middleware/kv-cache";

export const UnitListSchema = z.array(z.string()).openapi("UnitList", {
  description: "Codes of the units a bill-of-materials quantity may use.",
  example: ["kg", "g", "m", "cm"],
});

export const listUnits = createRoute({
  method: "get",
  path: "/units",
  operationId: "listUnits",
  tags: ["Reference data"],
  summary: "List units",
  description:
    "The units accepted in bill-of-materials entries. Public; cacheable for an hour. A plain array, not a page: the set is small and fixed.",
  middleware: [cacheResponse("reference-data")] as const,
  responses: {
    200: { description: "Unit codes in display order.", content: { "application/json": { schema: UnitListSchema } } },
    ...problemResponses(500),
  },
});
