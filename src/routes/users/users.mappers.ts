import type { z } from "@hono/zod-openapi";
import type { SessionUser } from "../../auth/session-user";
import { isoSeconds } from "../../lib/time";
import { ROLE_LIMITS } from "../../services/media/quotas";
import type { MeSchema } from "./users.routes";

/** The fields an account shows both to its owner (`/users/me`) and to an administrator. */
export function accountFields(user: SessionUser) {
  return {
    id: user.id,
    email: user.email,
    username: user.username,
    is_active: user.isActive,
    is_verified: user.isVerified,
    is_superuser: user.isSuperuser,
    role: user.role,
    totp_enabled: user.totpEnabled,
    has_usable_password: user.hashedPassword !== null,
    created_at: isoSeconds(user.createdAt * 1000),
    updated_at: isoSeconds(user.updatedAt * 1000),
    last_login_at: user.lastLoginAt === null ? null : isoSeconds(user.lastLoginAt * 1000),
    upload_file_count: user.uploadFileCount,
    upload_total_bytes: user.uploadTotalBytes,
  };
}

/** The account as `/users/me` shows it to its owner: also preferences and the role's quotas. */
export function toMe(user: SessionUser): z.infer<typeof MeSchema> {
  const limits = ROLE_LIMITS[user.role];
  return {
    ...accountFields(user),
    preferences: { profile_visibility: user.profileVisibility },
    upload_quota_files: limits.uploadQuotaFiles,
    upload_quota_bytes: limits.uploadQuotaBytes,
    image_upload_max_bytes: limits.imageUploadMaxBytes,
    image_upload_max_pixels: limits.imageUploadMaxPixels,
    terms_accepted_version: user.termsAcceptedVersion,
    terms_accepted_at: user.termsAcceptedAt === null ? null : isoSeconds(user.termsAcceptedAt * 1000),
  };
}
