import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { pageEnvelope } from "../../lib/pagination";
import { listMaterials as listRows, readMaterial } from "../../services/materials";
import { markCacheable } from "../reference/reference-http";
import { toMaterial, toMaterialDetail } from "./materials.mappers";
import { materialFilterFromQuery } from "./materials.query";
import type * as routes from "./materials.routes";

export const listMaterials: RouteHandler<typeof routes.listMaterials, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const page = { page: query.page, size: query.size };
  const { rows, total } = await listRows(c.get("services"), materialFilterFromQuery(query), page);
  markCacheable(c);
  return c.json(pageEnvelope(rows.map(toMaterial), total, page), 200);
};

export const getMaterial: RouteHandler<typeof routes.getMaterial, AppEnv> = async (c) => {
  const detail = await readMaterial(c.get("services"), c.req.valid("param").id);
  markCacheable(c);
  return c.json(toMaterialDetail(detail), 200);
};
