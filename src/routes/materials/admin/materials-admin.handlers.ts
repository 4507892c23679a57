import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { requireAdmin } from "../../../middleware/guards";
import * as materials from "../../../services/materials";
import { toMaterialDetail } from "../materials.mappers";
import type * as routes from "./materials-admin.routes";

export const createMaterial: RouteHandler<typeof routes.createMaterial, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  const detail = await materials.createMaterial(c.get("services"), actor, c.req.valid("json"));
  c.header("Location", `/v1/materials/${detail.row.id}`);
  return c.json(toMaterialDetail(detail), 201);
};

export const updateMaterial: RouteHandler<typeof routes.updateMaterial, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  const detail = await materials.updateMaterial(c.get("services"), actor, c.req.valid("param").id, c.req.valid("json"));
  return c.json(toMaterialDetail(detail), 200);
};

export const deleteMaterial: RouteHandler<typeof routes.deleteMaterial, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  await materials.deleteMaterial(c.get("services"), actor, c.req.valid("param").id);
  return c.body(null, 204);
};

export const addMaterialCategories: RouteHandler<typeof routes.addMaterialCategories, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  const { category_ids } = c.req.valid("json");
  const detail = await materials.linkMaterialCategories(c.get("services"), actor, c.req.valid("param").id, category_ids);
  return c.json(toMaterialDetail(detail), 200);
};

export const removeMaterialCategory: RouteHandler<typeof routes.removeMaterialCategory, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  const { id, category_id } = c.req.valid("param");
  await materials.unlinkMaterialCategory(c.get("services"), actor, id, category_id);
  return c.body(null, 204);
};
