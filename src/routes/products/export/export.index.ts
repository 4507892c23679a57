import type { BaseEnv } from "../../../env";
import { createRouter } from "../../../lib/router";
import * as handlers from "./export.handlers";
import * as routes from "./export.routes";

/**
 * `GET /products/export` and `GET /products/{id}/export`. Mount under `/v1` BEFORE the products
 * router, so `/v1/products/export` is not taken for `/v1/products/{id}`.
 */
export const productExportRouter = createRouter<BaseEnv>()
  .openapi(routes.exportProducts, handlers.exportProducts)
  .openapi(routes.exportProduct, handlers.exportProduct);
