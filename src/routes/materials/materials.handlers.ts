import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { pageEnvelope } from "../../lib/pagination";
import { listMaterials as listRows, readMaterial } from "../../services/materials";
import { toMaterial, toMaterialDetail } from "./materials.mappers";
import { materialFilterFromQuery } from "./materials.query";
import type * as routes from "./materials.routes";

/** Browsers may keep a read briefly; the KV copy behind it is cleared by every admin write. */
export const PUBLIC_CACHE_CONTROL = "public, max-age=60";

export const listMaterials: RouteHandler<typeof routes.listMaterials, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const page = { page: query.page, size: query.size };
  const { rows, total } = await listRows(c.get("db"), materialFilterFromQuery(query), page);
  c.header("Cache-Control", PUBLIC_CACHE_CONTROL);
  return c.json(pageEnvelope(rows.map(toMaterial), total, page), 200);
};

export const getMaterial: RouteHandler<typeof routes.getMaterial, AppEnv> = async (c) => {
  const detail = await readMaterial(c.get("db"), c.req.valid("param").id);
  c.header("Cache-Control", PUBLIC_CACHE_CONTROL);
  return c.json(toMaterialDetail(detail), 200);
};
