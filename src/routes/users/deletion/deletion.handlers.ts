import type { AppRouteHandler } from "../../../env";
import { requireAdmin, requireUser } from "../../../middleware/guards";
import { assertDeletable, deleteAccount } from "../../../services/accounts/deletion";
import { assertStepUp } from "../../../services/sign-in/step-up";
import { clearBrowserSession } from "../../auth/transport";
import type { adminDeleteUser as adminDeleteUserRoute, deleteMe as deleteMeRoute } from "./deletion.routes";

export const deleteMe: AppRouteHandler<typeof deleteMeRoute> = async (c) => {
  const user = requireUser(c);
  const body = (c.req.valid("json") ?? {}) as { current_password?: string; mfa_code?: string };
  const svc = c.get("services");
  const { records } = await assertDeletable(svc, user.id);
  await assertStepUp(svc, user, { currentPassword: body.current_password, mfaCode: body.mfa_code }, { operation: "Deleting the account" });
  await deleteAccount(svc, { userId: user.id, content: "anonymize", records });
  if (c.get("session")?.transport === "cookie") clearBrowserSession(c);
  return c.body(null, 204);
};

export const adminDeleteUser: AppRouteHandler<typeof adminDeleteUserRoute> = async (c) => {
  const actor = requireAdmin(c);
  const { current_password, mfa_code } = c.req.valid("json");
  const svc = c.get("services");
  const userId = c.req.valid("param").user_id;
  const { records } = await assertDeletable(svc, userId);
  await assertStepUp(svc, actor, { currentPassword: current_password, mfaCode: mfa_code }, { operation: "Deleting an account" });
  await deleteAccount(svc, { userId, content: c.req.valid("query").content, actorId: actor.id, records });
  return c.body(null, 204);
};
