import type { RouteHandler } from "@hono/zod-openapi";
import { requireAdmin, requireUser } from "../../../middleware/guards";
import type { Context } from "hono";
import type { AppEnv } from "../../../env";
import { retireCamera } from "../../../services/camera-relay";
import { endStreamsOf } from "../../../services/camera-streams";
import { queuePurge } from "../../../queues/media-messages";
import { assertDeletable, deleteAccount } from "../../../services/account-deletion";
import { assertStepUp } from "../../../services/step-up";
import { clearBrowserSession } from "../../auth/transport";
import type { adminDeleteUser as adminDeleteUserRoute, deleteMe as deleteMeRoute } from "./deletion.routes";

/** The deleted account's cameras lost their keys with it; their devices are told to unpair. */
function closeTunnels(c: Context<AppEnv>, cameraIds: string[]): Promise<void[]> {
  return Promise.all(cameraIds.map((id) => retireCamera(c.get("services"), id, true)));
}

export const deleteMe: RouteHandler<typeof deleteMeRoute, AppEnv> = async (c) => {
  const user = requireUser(c);
  const body = (c.req.valid("json") ?? {}) as { current_password?: string; mfa_code?: string };
  const svc = c.get("services");
  await assertDeletable(svc, user.id);
  await assertStepUp(svc, user, { currentPassword: body.current_password, mfaCode: body.mfa_code }, { operation: "Deleting the account" });
  await endStreamsOf(c.get("services"), user.id);
  const deleted = await deleteAccount(svc, { userId: user.id, content: "anonymize" });
  await closeTunnels(c, deleted.cameraIds);
  if (c.get("session")?.transport === "cookie") clearBrowserSession(c);
  return c.body(null, 204);
};

export const adminDeleteUser: RouteHandler<typeof adminDeleteUserRoute, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  const { current_password, mfa_code } = c.req.valid("json");
  const svc = c.get("services");
  const userId = c.req.valid("param").user_id;
  await assertDeletable(svc, userId);
  await assertStepUp(svc, actor, { currentPassword: current_password, mfaCode: mfa_code }, { operation: "Deleting an account" });
  await endStreamsOf(c.get("services"), userId);
  const deleted = await deleteAccount(svc, { userId, content: c.req.valid("query").content, actorId: actor.id });
  await queuePurge(svc, deleted.media);
  await closeTunnels(c, deleted.cameraIds);
  return c.body(null, 204);
};
