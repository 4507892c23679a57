import type { BaseEnv } from "../../env";
import { createRouter } from "../../lib/router";
import * as handlers from "./products.handlers";
import * as routes from "./products.routes";

export const productsRouter = createRouter<BaseEnv>()
  .openapi(routes.listProducts, handlers.listProducts)
  .openapi(routes.createProduct, handlers.createProduct)
  .openapi(routes.getProduct, handlers.getProduct)
  .openapi(routes.updateProduct, handlers.updateProduct)
  .openapi(routes.deleteProduct, handlers.deleteProduct)
  .openapi(routes.createProductComponent, handlers.createProductComponent)
  .openapi(routes.getComponent, handlers.getComponent)
  .openapi(routes.updateComponent, handlers.updateComponent)
  .openapi(routes.deleteComponent, handlers.deleteComponent)
  .openapi(routes.createSubcomponent, handlers.createSubcomponent);
