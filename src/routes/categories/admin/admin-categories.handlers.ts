import type { AppRouteHandler } from "../../../env";
import { requireAdmin } from "../../../middleware/guards";
import * as categories from "../../../services/reference/categories";
import { clearReferenceCache } from "../../reference/reference-http";
import { toCategory } from "../categories.mappers";
import type * as routes from "./admin-categories.routes";

export const createCategory: AppRouteHandler<typeof routes.createCategory> = async (c) => {
  const actor = requireAdmin(c);
  const row = await categories.createCategory(c.get("services"), actor, c.req.valid("json"));
  await clearReferenceCache(c);
  c.header("Location", `/v1/categories/${row.id}`);
  return c.json(toCategory(row), 201);
};

export const updateCategory: AppRouteHandler<typeof routes.updateCategory> = async (c) => {
  const actor = requireAdmin(c);
  const row = await categories.updateCategory(c.get("services"), actor, c.req.valid("param").id, c.req.valid("json"));
  await clearReferenceCache(c);
  return c.json(toCategory(row), 200);
};

export const deleteCategory: AppRouteHandler<typeof routes.deleteCategory> = async (c) => {
  const actor = requireAdmin(c);
  await categories.deleteCategory(c.get("services"), actor, c.req.valid("param").id);
  await clearReferenceCache(c);
  return c.body(null, 204);
};
