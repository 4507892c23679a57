import type { AppRouteHandler } from "../../../env";
import { requireAdmin } from "../../../middleware/guards";
import * as productTypes from "../../../services/reference/product-types";
import { toProductTypeDetail } from "../product-types.mappers";
import type * as routes from "./product-types-admin.routes";

export const createProductType: AppRouteHandler<typeof routes.createProductType> = async (c) => {
  const actor = requireAdmin(c);
  const detail = await productTypes.createProductType(c.get("services"), actor, c.req.valid("json"));
  c.header("Location", `/v1/product-types/${detail.row.id}`);
  return c.json(toProductTypeDetail(detail), 201);
};

export const updateProductType: AppRouteHandler<typeof routes.updateProductType> = async (c) => {
  const actor = requireAdmin(c);
  const detail = await productTypes.updateProductType(c.get("services"), actor, c.req.valid("param").id, c.req.valid("json"));
  return c.json(toProductTypeDetail(detail), 200);
};

export const deleteProductType: AppRouteHandler<typeof routes.deleteProductType> = async (c) => {
  const actor = requireAdmin(c);
  await productTypes.deleteProductType(c.get("services"), actor, c.req.valid("param").id);
  return c.body(null, 204);
};

export const addProductTypeCategories: AppRouteHandler<typeof routes.addProductTypeCategories> = async (c) => {
  const actor = requireAdmin(c);
  const { category_ids } = c.req.valid("json");
  const detail = await productTypes.linkProductTypeCategories(c.get("services"), actor, c.req.valid("param").id, category_ids);
  return c.json(toProductTypeDetail(detail), 200);
};

export const removeProductTypeCategory: AppRouteHandler<typeof routes.removeProductTypeCategory> = async (c) => {
  const actor = requireAdmin(c);
  const { id, category_id } = c.req.valid("param");
  await productTypes.unlinkProductTypeCategory(c.get("services"), actor, id, category_id);
  return c.body(null, 204);
};
