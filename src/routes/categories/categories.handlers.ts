import type { AppRouteHandler } from "../../env";
import { pageEnvelope } from "../../lib/pagination";
import { categoryNotFound, listCategories as listCategoryRows, readCategory } from "../../services/reference/categories";
import { readCategoryTree } from "../../services/reference/category-tree";
import { markCacheable } from "../reference/reference-http";
import { toCategory, toCategoryDetail, toCategoryTree } from "./categories.mappers";
import { categoryFilterFromQuery } from "./categories.query";
import type * as routes from "./categories.routes";

export const listCategories: AppRouteHandler<typeof routes.listCategories> = async (c) => {
  const query = c.req.valid("query");
  const page = { page: query.page, size: query.size };
  const found = await listCategoryRows(c.get("services"), categoryFilterFromQuery(query), page);
  markCacheable(c);
  return c.json(pageEnvelope(found.rows.map(toCategory), found.total, page), 200);
};

export const getCategoryTree: AppRouteHandler<typeof routes.getCategoryTree> = async (c) => {
  const { recursion_depth, taxonomy_id, page, size } = c.req.valid("query");
  const scope = { kind: "all" as const, ...(taxonomy_id !== undefined && { taxonomyId: taxonomy_id }) };
  const tree = await readCategoryTree(c.get("services"), scope, recursion_depth, { page, size });
  markCacheable(c);
  return c.json(pageEnvelope(toCategoryTree(tree.rows), tree.total, { page, size }), 200);
};

export const getCategory: AppRouteHandler<typeof routes.getCategory> = async (c) => {
  const detail = await readCategory(c.get("services"), c.req.valid("param").id);
  if (!detail) throw categoryNotFound();
  markCacheable(c);
  return c.json(toCategoryDetail(detail), 200);
};

export const listSubcategories: AppRouteHandler<typeof routes.listSubcategories> = async (c) => {
  const { id } = c.req.valid("param");
  const query = c.req.valid("query");
  const page = { page: query.page, size: query.size };
  const found = await listCategoryRows(c.get("services"), categoryFilterFromQuery(query), page, { kind: "category", id });
  if (!found) throw categoryNotFound();
  markCacheable(c);
  return c.json(pageEnvelope(found.rows.map(toCategory), found.total, page), 200);
};

export const getSubcategoryTree: AppRouteHandler<typeof routes.getSubcategoryTree> = async (c) => {
  const { id } = c.req.valid("param");
  const { recursion_depth, page, size } = c.req.valid("query");
  const tree = await readCategoryTree(c.get("services"), { kind: "category", id }, recursion_depth, { page, size });
  if (!tree) throw categoryNotFound();
  markCacheable(c);
  return c.json(pageEnvelope(toCategoryTree(tree.rows), tree.total, { page, size }), 200);
};
