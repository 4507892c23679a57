import type { AppRouteHandler } from "../../../env";
import { requireAdmin } from "../../../middleware/guards";
import * as taxonomies from "../../../services/reference/taxonomies";
import { clearReferenceCache } from "../../reference/reference-http";
import { toTaxonomy } from "../taxonomies.mappers";
import type * as routes from "./admin-taxonomies.routes";

export const createTaxonomy: AppRouteHandler<typeof routes.createTaxonomy> = async (c) => {
  const actor = requireAdmin(c);
  const row = await taxonomies.createTaxonomy(c.get("services"), actor, c.req.valid("json"));
  await clearReferenceCache(c);
  c.header("Location", `/v1/taxonomies/${row.id}`);
  return c.json(toTaxonomy(row), 201);
};

export const updateTaxonomy: AppRouteHandler<typeof routes.updateTaxonomy> = async (c) => {
  const actor = requireAdmin(c);
  const row = await taxonomies.updateTaxonomy(c.get("services"), actor, c.req.valid("param").id, c.req.valid("json"));
  await clearReferenceCache(c);
  return c.json(toTaxonomy(row), 200);
};

export const deleteTaxonomy: AppRouteHandler<typeof routes.deleteTaxonomy> = async (c) => {
  const actor = requireAdmin(c);
  await taxonomies.deleteTaxonomy(c.get("services"), actor, c.req.valid("param").id);
  await clearReferenceCache(c);
  return c.body(null, 204);
};
