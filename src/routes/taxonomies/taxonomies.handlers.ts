import type { AppRouteHandler } from "../../env";
import { pageEnvelope } from "../../lib/pagination";
import { listCategories } from "../../services/reference/categories";
import { readCategoryTree } from "../../services/reference/category-tree";
import { listTaxonomies as listTaxonomyRows, readTaxonomy, taxonomyNotFound } from "../../services/reference/taxonomies";
import { toCategory, toCategoryTree } from "../categories/categories.mappers";
import { categoryFilterFromQuery } from "../categories/categories.query";
import { markCacheable } from "../reference/reference-http";
import { toTaxonomy, toTaxonomyDetail } from "./taxonomies.mappers";
import { taxonomyFilterFromQuery } from "./taxonomies.query";
import type * as routes from "./taxonomies.routes";

export const listTaxonomies: AppRouteHandler<typeof routes.listTaxonomies> = async (c) => {
  const query = c.req.valid("query");
  const page = { page: query.page, size: query.size };
  const { rows, total } = await listTaxonomyRows(c.get("services"), taxonomyFilterFromQuery(query), page);
  markCacheable(c);
  return c.json(pageEnvelope(rows.map(toTaxonomy), total, page), 200);
};

export const getTaxonomy: AppRouteHandler<typeof routes.getTaxonomy> = async (c) => {
  const row = await readTaxonomy(c.get("services"), c.req.valid("param").id);
  if (!row) throw taxonomyNotFound();
  markCacheable(c);
  return c.json(toTaxonomyDetail(row), 200);
};

export const listTaxonomyCategories: AppRouteHandler<typeof routes.listTaxonomyCategories> = async (c) => {
  const { id } = c.req.valid("param");
  const query = c.req.valid("query");
  const page = { page: query.page, size: query.size };
  const found = await listCategories(c.get("services"), categoryFilterFromQuery(query), page, { kind: "taxonomy", id });
  if (!found) throw taxonomyNotFound();
  markCacheable(c);
  return c.json(pageEnvelope(found.rows.map(toCategory), found.total, page), 200);
};

export const getTaxonomyCategoryTree: AppRouteHandler<typeof routes.getTaxonomyCategoryTree> = async (c) => {
  const { id } = c.req.valid("param");
  const { recursion_depth, page, size } = c.req.valid("query");
  const tree = await readCategoryTree(c.get("services"), { kind: "taxonomy", id }, recursion_depth, { page, size });
  if (!tree) throw taxonomyNotFound();
  markCacheable(c);
  return c.json(pageEnvelope(toCategoryTree(tree.rows), tree.total, { page, size }), 200);
};
