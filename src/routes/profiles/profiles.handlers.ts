import { USERNAME_PATTERN } from "../../auth/account-names";
import type { AppRouteHandler } from "../../env";
import { pageEnvelope } from "../../lib/pagination";
import { ApiError } from "../../lib/problem";
import { listUserProducts as listProductsOf, readProfile } from "../../services/accounts/profiles";
import { toProductSummary } from "../products/products.mappers";
import { parseProductListQuery } from "../products/products.query";
import { toPublicProfile } from "./profiles.mappers";
import type * as routes from "./profiles.routes";

// Missing and hidden read the same, so the answer does not tell whether an account exists.
const profileNotFound = () => new ApiError(404, { code: "PROFILE_NOT_FOUND", detail: "No profile with this username is visible to you." });
const userNotFound = () => new ApiError(404, { code: "USER_NOT_FOUND", detail: "No user with this id is visible to you." });

export const getProfile: AppRouteHandler<typeof routes.getProfile> = async (c) => {
  const { username } = c.req.valid("param");
  // A name no account can have needs no query.
  // Asked for the viewer after the read: a carried token check has answered by then.
  const profile = USERNAME_PATTERN.test(username) ? await readProfile(c.get("services"), username, () => c.get("user")) : null;
  if (!profile) throw profileNotFound();
  c.header("Cache-Control", "no-store");
  return c.json(toPublicProfile(profile), 200);
};

export const listUserProducts: AppRouteHandler<typeof routes.listUserProducts> = async (c) => {
  const { filter, page } = parseProductListQuery(c.req.valid("query"));
  // The statements do not depend on the viewer (`owner` is refused here): asked for after the read,
  // when a carried token check has answered.
  const listed = await listProductsOf(c.get("services"), c.req.valid("param").user_id, filter, page, () => c.get("user"));
  if (!listed) throw userNotFound();
  const viewer = c.get("user");
  c.header("Cache-Control", "no-store");
  return c.json(
    pageEnvelope(
      listed.rows.map((row) => toProductSummary(row, viewer)),
      listed.total,
      page,
    ),
    200,
  );
};
