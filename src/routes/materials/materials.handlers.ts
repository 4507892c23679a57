import type { AppRouteHandler } from "../../env";
import { pageEnvelope } from "../../lib/pagination";
import { listMaterials as listRows, readMaterial } from "../../services/reference/materials";
import { markCacheable } from "../reference/reference-http";
import { toMaterial, toMaterialDetail } from "./materials.mappers";
import { materialFilterFromQuery } from "./materials.query";
import type * as routes from "./materials.routes";

export const listMaterials: AppRouteHandler<typeof routes.listMaterials> = async (c) => {
  const query = c.req.valid("query");
  const page = { page: query.page, size: query.size };
  const { rows, total } = await listRows(c.get("services"), materialFilterFromQuery(query), page);
  markCacheable(c);
  return c.json(pageEnvelope(rows.map(toMaterial), total, page), 200);
};

export const getMaterial: AppRouteHandler<typeof routes.getMaterial> = async (c) => {
  const detail = await readMaterial(c.get("services"), c.req.valid("param").id);
  markCacheable(c);
  return c.json(toMaterialDetail(detail), 200);
};
