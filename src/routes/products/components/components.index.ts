import type { BaseEnv } from "../../../env";
import { createRouter } from "../../../lib/router";
import * as handlers from "./components.handlers";
import * as routes from "./components.routes";

/**
 * Reads of the components under a base product or a component: the paged direct components and
 * the nested tree (`GET /{products|components}/{id}/components[/tree]`). Mount under `/v1`.
 */
export const componentsTreeRouter = createRouter<BaseEnv>()
  .openapi(routes.listProductComponents, handlers.listProductComponents)
  .openapi(routes.getProductComponentTree, handlers.getProductComponentTree)
  .openapi(routes.listSubcomponents, handlers.listSubcomponents)
  .openapi(routes.getComponentTree, handlers.getComponentTree);
