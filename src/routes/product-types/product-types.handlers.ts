import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { pageEnvelope } from "../../lib/pagination";
import { listProductTypes as listRows, readProductType } from "../../services/product-types";
import { markCacheable } from "../reference/reference-http";
import { toProductType, toProductTypeDetail } from "./product-types.mappers";
import { productTypeFilterFromQuery } from "./product-types.query";
import type * as routes from "./product-types.routes";

export const listProductTypes: RouteHandler<typeof routes.listProductTypes, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const page = { page: query.page, size: query.size };
  const { rows, total } = await listRows(c.get("services"), productTypeFilterFromQuery(query), page);
  markCacheable(c);
  return c.json(pageEnvelope(rows.map(toProductType), total, page), 200);
};

export const getProductType: RouteHandler<typeof routes.getProductType, AppEnv> = async (c) => {
  const detail = await readProductType(c.get("services"), c.req.valid("param").id);
  markCacheable(c);
  return c.json(toProductTypeDetail(detail), 200);
};
