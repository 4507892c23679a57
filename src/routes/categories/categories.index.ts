import { createRouter } from "../../lib/router";
import * as adminHandlers from "./admin/admin-categories.handlers";
import * as adminRoutes from "./admin/admin-categories.routes";
import * as handlers from "./categories.handlers";
import * as routes from "./categories.routes";

/**
 * Public category reads (`/categories...`) and their admin writes (`/admin/categories...`, guarded
 * by `adminOnly` in app.ts). Mount under `/v1`. `/categories/tree` comes before `/categories/{id}`.
 */
export const categoriesRouter = createRouter()
  .openapi(routes.listCategories, handlers.listCategories)
  .openapi(routes.getCategoryTree, handlers.getCategoryTree)
  .openapi(routes.getCategory, handlers.getCategory)
  .openapi(routes.listSubcategories, handlers.listSubcategories)
  .openapi(routes.getSubcategoryTree, handlers.getSubcategoryTree)
  .openapi(adminRoutes.createCategory, adminHandlers.createCategory)
  .openapi(adminRoutes.updateCategory, adminHandlers.updateCategory)
  .openapi(adminRoutes.deleteCategory, adminHandlers.deleteCategory);
