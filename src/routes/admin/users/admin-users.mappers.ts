import type { z } from "@hono/zod-openapi";
import { isoSeconds } from "../../../lib/time";
import type { SessionUser } from "../../../services/sessions";
import type { AdminUserSchema } from "./admin-users.routes";

/** An account as an administrator sees it: control fields, TOTP state and usage, no secrets. */
export function toAdminUser(user: SessionUser): z.infer<typeof AdminUserSchema> {
  return {
    id: user.id,
    email: user.email,
    username: user.username,
    is_active: user.isActive,
    is_verified: user.isVerified,
    is_superuser: user.isSuperuser,
    role: user.role,
    totp_enabled: user.totpEnabled,
    profile_visibility: user.profileVisibility,
    created_at: isoSeconds(user.createdAt * 1000),
    updated_at: isoSeconds(user.updatedAt * 1000),
    last_login_at: user.lastLoginAt === null ? null : isoSeconds(user.lastLoginAt * 1000),
    upload_file_count: user.uploadFileCount,
    upload_total_bytes: user.uploadTotalBytes,
  };
}
