import type { AppRouteHandler } from "../../env";
import { requireUser } from "../../middleware/guards";
import { updateProfile } from "../../services/accounts/self-service";
import { clearBrowserSession } from "../auth/transport";
import { toMe } from "./users.mappers";
import type { getMe as getMeRoute, updateMe as updateMeRoute } from "./users.routes";

export const getMe: AppRouteHandler<typeof getMeRoute> = async (c) => c.json(toMe(requireUser(c)), 200);

export const updateMe: AppRouteHandler<typeof updateMeRoute> = async (c) => {
  const { user, revoked } = await updateProfile(c.get("services"), requireUser(c), c.req.valid("json"));
  // The cookies now hold revoked tokens; a browser drops them and signs in again.
  if (revoked && c.get("session")?.transport === "cookie") clearBrowserSession(c);
  return c.json(toMe(user), 200);
};
