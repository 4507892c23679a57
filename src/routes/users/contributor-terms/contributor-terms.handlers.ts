import type { RouteHandler } from "@hono/zod-openapi";
import { requireUser } from "../../../auth/permissions";
import type { AppEnv } from "../../../env";
import { isoSeconds } from "../../../lib/time";
import { acceptContributorTerms as accept, withdrawContributorTerms as withdraw } from "../../../services/contributor-terms";
import { serviceDeps } from "../../deps";
import { toMe } from "../users.mappers";
import type * as routes from "./contributor-terms.routes";

export const getContributorTerms: RouteHandler<typeof routes.getContributorTerms, AppEnv> = async (c) => {
  const user = requireUser(c);
  return c.json(
    {
      current_version: c.get("config").contributorTermsVersion,
      accepted_version: user.termsAcceptedVersion,
      accepted_at: user.termsAcceptedAt === null ? null : isoSeconds(user.termsAcceptedAt * 1000),
    },
    200,
  );
};

export const acceptContributorTerms: RouteHandler<typeof routes.acceptContributorTerms, AppEnv> = async (c) => {
  const user = await accept(serviceDeps(c), requireUser(c), c.req.valid("json").version);
  return c.json(toMe(user), 200);
};

export const withdrawContributorTerms: RouteHandler<typeof routes.withdrawContributorTerms, AppEnv> = async (c) => {
  await withdraw(serviceDeps(c), requireUser(c));
  return c.body(null, 204);
};
