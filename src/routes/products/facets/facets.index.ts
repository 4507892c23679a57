import type { BaseEnv } from "../../../env";
import { createRouter } from "../../../lib/router";
import * as handlers from "./facets.handlers";
import * as routes from "./facets.routes";

/**
 * `GET /products/facets` and `GET /products/suggestions/brands|models`. Mount under `/v1`
 * BEFORE the products router, so `/v1/products/facets` is not taken for `/v1/products/{id}`.
 */
export const productFacetsRouter = createRouter<BaseEnv>()
  .openapi(routes.getProductFacets, handlers.getProductFacets)
  .openapi(routes.suggestProductBrands, handlers.suggestProductBrands)
  .openapi(routes.suggestProductModels, handlers.suggestProductModels);
