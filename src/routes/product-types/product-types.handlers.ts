import type { AppRouteHandler } from "../../env";
import { pageEnvelope } from "../../lib/pagination";
import { listProductTypes as listRows, readProductType } from "../../services/reference/product-types";
import { markCacheable } from "../reference/reference-http";
import { toProductType, toProductTypeDetail } from "./product-types.mappers";
import { productTypeFilterFromQuery } from "./product-types.query";
import type * as routes from "./product-types.routes";

export const listProductTypes: AppRouteHandler<typeof routes.listProductTypes> = async (c) => {
  const query = c.req.valid("query");
  const page = { page: query.page, size: query.size };
  const { rows, total } = await listRows(c.get("services"), productTypeFilterFromQuery(query), page);
  markCacheable(c);
  return c.json(pageEnvelope(rows.map(toProductType), total, page), 200);
};

export const getProductType: AppRouteHandler<typeof routes.getProductType> = async (c) => {
  const detail = await readProductType(c.get("services"), c.req.valid("param").id);
  markCacheable(c);
  return c.json(toProductTypeDetail(detail), 200);
};
