import { createRouter } from "../../lib/router";
import * as adminHandlers from "./admin/admin-taxonomies.handlers";
import * as adminRoutes from "./admin/admin-taxonomies.routes";
import * as handlers from "./taxonomies.handlers";
import * as routes from "./taxonomies.routes";

/**
 * Public taxonomy reads (`/taxonomies...`, with the categories of one taxonomy) and their admin
 * writes (`/admin/taxonomies...`, guarded by `adminOnly` in app.ts). Mount under `/v1`.
 */
export const taxonomiesRouter = createRouter()
  .openapi(routes.listTaxonomies, handlers.listTaxonomies)
  .openapi(routes.getTaxonomy, handlers.getTaxonomy)
  .openapi(routes.listTaxonomyCategories, handlers.listTaxonomyCategories)
  .openapi(routes.getTaxonomyCategoryTree, handlers.getTaxonomyCategoryTree)
  .openapi(adminRoutes.createTaxonomy, adminHandlers.createTaxonomy)
  .openapi(adminRoutes.updateTaxonomy, adminHandlers.updateTaxonomy)
  .openapi(adminRoutes.deleteTaxonomy, adminHandlers.deleteTaxonomy);
