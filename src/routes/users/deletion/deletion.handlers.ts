import type { RouteHandler } from "@hono/zod-openapi";
import { requireAdmin, requireUser } from "../../../auth/permissions";
import type { Context } from "hono";
import type { AppEnv } from "../../../env";
import { retireCamera } from "../../../services/camera-relay";
import { endStreamsOf } from "../../../services/camera-streams";
import { queuePurge } from "../../../queues/media-messages";
import { assertDeletable, deleteAccount } from "../../../services/account-deletion";
import { assertStepUp } from "../../../services/step-up";
import { serviceDeps, streamDeps } from "../../deps";
import { clearBrowserSession } from "../../auth/transport";
import type { adminDeleteUser as adminDeleteUserRoute, deleteMe as deleteMeRoute } from "./deletion.routes";

/** The deleted account's cameras lost their keys with it; their devices are told to unpair. */
function closeTunnels(c: Context<AppEnv>, cameraIds: string[]): Promise<void[]> {
  return Promise.all(cameraIds.map((id) => retireCamera({ relays: c.env.CAMERA_RELAY, bucket: c.env.UPLOADS, log: c.get("log") }, id, true)));
}

export const deleteMe: RouteHandler<typeof deleteMeRoute, AppEnv> = async (c) => {
  const user = requireUser(c);
  const body = (c.req.valid("json") ?? {}) as { current_password?: string; mfa_code?: string };
  const deps = serviceDeps(c);
  await assertDeletable(deps, user.id);
  await assertStepUp(deps, user, { currentPassword: body.current_password, mfaCode: body.mfa_code }, { operation: "Deleting the account" });
  await endStreamsOf(streamDeps(c), user.id);
  const deleted = await deleteAccount(deps, { userId: user.id, content: "anonymize" });
  await closeTunnels(c, deleted.cameraIds);
  if (c.get("session")?.transport === "cookie") clearBrowserSession(c);
  return c.body(null, 204);
};

export const adminDeleteUser: RouteHandler<typeof adminDeleteUserRoute, AppEnv> = async (c) => {
  const actor = requireAdmin(c);
  const { current_password, mfa_code } = c.req.valid("json");
  const deps = serviceDeps(c);
  const userId = c.req.valid("param").user_id;
  await assertDeletable(deps, userId);
  await assertStepUp(deps, actor, { currentPassword: current_password, mfaCode: mfa_code }, { operation: "Deleting an account" });
  await endStreamsOf(streamDeps(c), userId);
  const deleted = await deleteAccount(deps, { userId, content: c.req.valid("query").content, actorId: actor.id });
  await queuePurge(c.env.MEDIA_QUEUE, c.get("log"), deleted.media);
  await closeTunnels(c, deleted.cameraIds);
  return c.body(null, 204);
};
