import { createRouter } from "../../lib/router";
import * as handlers from "./oauth.handlers";
import * as routes from "./oauth.routes";

/** Identity-provider sign-in, linking and the OAuth hand-off claims; mount under `/v1`. */
export const oauthRouter = createRouter()
  .openapi(routes.sessionAuthorize, handlers.sessionAuthorize)
  .openapi(routes.sessionCallback, handlers.sessionCallback)
  .openapi(routes.tokenAuthorize, handlers.tokenAuthorize)
  .openapi(routes.tokenCallback, handlers.tokenCallback)
  .openapi(routes.claimLogin, handlers.claimLogin)
  .openapi(routes.associateAuthorize, handlers.associateAuthorize)
  .openapi(routes.associateCallback, handlers.associateCallback)
  .openapi(routes.unlink, handlers.unlink)
  .openapi(routes.listLinks, handlers.listLinks)
  .openapi(routes.claimMfaHandoff, handlers.claimMfaHandoff);
