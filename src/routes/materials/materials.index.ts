import { createRouter } from "../../lib/router";
import * as adminHandlers from "./admin/materials-admin.handlers";
import * as adminRoutes from "./admin/materials-admin.routes";
import * as handlers from "./materials.handlers";
import * as routes from "./materials.routes";

/** `/v1/materials...` (public reads) and `/v1/admin/materials...` (`adminOnly` in app.ts has already checked the caller). */
export const materialsRouter = createRouter()
  .openapi(routes.listMaterials, handlers.listMaterials)
  .openapi(routes.getMaterial, handlers.getMaterial)
  .openapi(adminRoutes.createMaterial, adminHandlers.createMaterial)
  .openapi(adminRoutes.updateMaterial, adminHandlers.updateMaterial)
  .openapi(adminRoutes.deleteMaterial, adminHandlers.deleteMaterial)
  .openapi(adminRoutes.addMaterialCategories, adminHandlers.addMaterialCategories)
  .openapi(adminRoutes.removeMaterialCategory, adminHandlers.removeMaterialCategory);
