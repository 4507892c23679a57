import { createRouter } from "../../../lib/router";
import type { RecordKind } from "../../../services/products/records";
import { bomHandlers } from "./materials.handlers";
import { bomRoutes } from "./materials.routes";

function register(router: ReturnType<typeof createRouter>, kind: RecordKind) {
  const routes = bomRoutes(kind);
  const handlers = bomHandlers(kind);
  return router
    .openapi(routes.list, handlers.list)
    .openapi(routes.add, handlers.add)
    .openapi(routes.removeMany, handlers.removeMany)
    .openapi(routes.get, handlers.get)
    .openapi(routes.addOne, handlers.addOne)
    .openapi(routes.update, handlers.update)
    .openapi(routes.removeOne, handlers.removeOne);
}

/**
 * Bills of materials of base products (`/products/{id}/materials...`) and components
 * (`/components/{id}/materials...`); mount under `/v1`.
 */
export const billOfMaterialsRouter = register(register(createRouter(), "product"), "component");
