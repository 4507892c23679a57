import type { AppRouteHandler } from "../../../env";
import { isoSeconds } from "../../../lib/time";
import { requireUser } from "../../../middleware/guards";
import { acceptContributorTerms as accept, withdrawContributorTerms as withdraw } from "../../../services/accounts/contributor-terms";
import { toMe } from "../users.mappers";
import type * as routes from "./contributor-terms.routes";

export const getContributorTerms: AppRouteHandler<typeof routes.getContributorTerms> = async (c) => {
  const user = requireUser(c);
  return c.json(
    {
      current_version: c.get("services").config.contributorTermsVersion,
      accepted_version: user.termsAcceptedVersion,
      accepted_at: user.termsAcceptedAt === null ? null : isoSeconds(user.termsAcceptedAt * 1000),
    },
    200,
  );
};

export const acceptContributorTerms: AppRouteHandler<typeof routes.acceptContributorTerms> = async (c) => {
  const user = await accept(c.get("services"), requireUser(c), c.req.valid("json").version);
  return c.json(toMe(user), 200);
};

export const withdrawContributorTerms: AppRouteHandler<typeof routes.withdrawContributorTerms> = async (c) => {
  await withdraw(c.get("services"), requireUser(c));
  return c.body(null, 204);
};
