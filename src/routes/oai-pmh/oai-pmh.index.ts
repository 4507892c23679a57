import { createRouter } from "../../lib/router";
import * as handlers from "./oai-pmh.handlers";
import * as routes from "./oai-pmh.routes";

/** `/v1/oai`: the OAI-PMH 2.0 repository of published releases. */
export const oaiPmhRouter = createRouter().openapi(routes.oaiGet, handlers.oaiGet).openapi(routes.oaiPost, handlers.oaiPost);
