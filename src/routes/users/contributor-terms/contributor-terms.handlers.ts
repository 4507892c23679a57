import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../../env";
import { isoSeconds } from "../../../lib/time";
import { requireUser } from "../../../middleware/guards";
import { acceptContributorTerms as accept, withdrawContributorTerms as withdraw } from "../../../services/contributor-terms";
import { toMe } from "../users.mappers";
import type * as routes from "./contributor-terms.routes";

export const getContributorTerms: RouteHandler<typeof routes.getContributorTerms, AppEnv> = async (c) => {
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

export const acceptContributorTerms: RouteHandler<typeof routes.acceptContributorTerms, AppEnv> = async (c) => {
  const user = await accept(c.get("services"), requireUser(c), c.req.valid("json").version);
  return c.json(toMe(user), 200);
};

export const withdrawContributorTerms: RouteHandler<typeof routes.withdrawContributorTerms, AppEnv> = async (c) => {
  await withdraw(c.get("services"), requireUser(c));
  return c.body(null, 204);
};
