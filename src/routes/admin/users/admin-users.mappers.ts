import type { z } from "@hono/zod-openapi";
import type { SessionUser } from "../../../auth/session-user";
import { accountFields } from "../../users/users.mappers";
import type { AdminUserSchema } from "./admin-users.routes";

/** An account as an administrator sees it: control fields, TOTP state and usage, no secrets. */
export function toAdminUser(user: SessionUser): z.infer<typeof AdminUserSchema> {
  return { ...accountFields(user), profile_visibility: user.profileVisibility };
}
