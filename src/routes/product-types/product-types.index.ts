import { createRouter } from "../../lib/router";
import * as adminHandlers from "./admin/product-types-admin.handlers";
import * as adminRoutes from "./admin/product-types-admin.routes";
import * as handlers from "./product-types.handlers";
import * as routes from "./product-types.routes";

/** `/v1/product-types...` (public reads) and `/v1/admin/product-types...` (`adminOnly` in app.ts has already checked the caller). */
export const productTypesRouter = createRouter()
  .openapi(routes.listProductTypes, handlers.listProductTypes)
  .openapi(routes.getProductType, handlers.getProductType)
  .openapi(adminRoutes.createProductType, adminHandlers.createProductType)
  .openapi(adminRoutes.updateProductType, adminHandlers.updateProductType)
  .openapi(adminRoutes.deleteProductType, adminHandlers.deleteProductType)
  .openapi(adminRoutes.addProductTypeCategories, adminHandlers.addProductTypeCategories)
  .openapi(adminRoutes.removeProductTypeCategory, adminHandlers.removeProductTypeCategory);
