import type { AppRouteHandler } from "../../../env";
import { requireAdmin } from "../../../middleware/guards";
import * as materials from "../../../services/reference/materials";
import { toMaterialDetail } from "../materials.mappers";
import type * as routes from "./materials-admin.routes";

export const createMaterial: AppRouteHandler<typeof routes.createMaterial> = async (c) => {
  const actor = requireAdmin(c);
  const detail = await materials.createMaterial(c.get("services"), actor, c.req.valid("json"));
  c.header("Location", `/v1/materials/${detail.row.id}`);
  return c.json(toMaterialDetail(detail), 201);
};

export const updateMaterial: AppRouteHandler<typeof routes.updateMaterial> = async (c) => {
  const actor = requireAdmin(c);
  const detail = await materials.updateMaterial(c.get("services"), actor, c.req.valid("param").id, c.req.valid("json"));
  return c.json(toMaterialDetail(detail), 200);
};

export const deleteMaterial: AppRouteHandler<typeof routes.deleteMaterial> = async (c) => {
  const actor = requireAdmin(c);
  await materials.deleteMaterial(c.get("services"), actor, c.req.valid("param").id);
  return c.body(null, 204);
};

export const addMaterialCategories: AppRouteHandler<typeof routes.addMaterialCategories> = async (c) => {
  const actor = requireAdmin(c);
  const { category_ids } = c.req.valid("json");
  const detail = await materials.linkMaterialCategories(c.get("services"), actor, c.req.valid("param").id, category_ids);
  return c.json(toMaterialDetail(detail), 200);
};

export const removeMaterialCategory: AppRouteHandler<typeof routes.removeMaterialCategory> = async (c) => {
  const actor = requireAdmin(c);
  const { id, category_id } = c.req.valid("param");
  await materials.unlinkMaterialCategory(c.get("services"), actor, id, category_id);
  return c.body(null, 204);
};
