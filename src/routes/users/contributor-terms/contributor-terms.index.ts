import { createRouter } from "../../../lib/router";
import * as handlers from "./contributor-terms.handlers";
import * as routes from "./contributor-terms.routes";

/** `/v1/users/me/contributor-terms`: the consent that dataset releases depend on. */
export const contributorTermsRouter = createRouter()
  .openapi(routes.getContributorTerms, handlers.getContributorTerms)
  .openapi(routes.acceptContributorTerms, handlers.acceptContributorTerms)
  .openapi(routes.withdrawContributorTerms, handlers.withdrawContributorTerms);
