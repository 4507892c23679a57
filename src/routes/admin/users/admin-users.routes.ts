import { createRoute, z } from "@hono/zod-openapi";
import { PROFILE_VISIBILITIES, ROLES } from "../../../db/schema";
import { SIGNED_IN } from "../../../lib/openapi";
import { PageQuerySchema, pagedSchema } from "../../../lib/pagination";
import { problemResponses } from "../../../lib/problem";
import { singleLineText } from "../../../lib/text";
import { UsernameSchema } from "../../auth/auth.schemas";

// No `authenticate` here: `adminOnly` (app.ts) guards all of /v1/admin/* before these run.
const ADMIN_ONLY =
  "Superusers with TOTP only: anonymous 401, anyone else 403 `SUPERUSER_REQUIRED`, a superuser without TOTP 403 `ADMIN_TOTP_REQUIRED`.";
const NOT_FOUND = "An unknown id (or the internal account that holds deleted users' products): 404 `USER_NOT_FOUND`.";

export const UserIdParamsSchema = z.object({
  user_id: z.coerce
    .number()
    .int()
    .positive()
    .openapi({ param: { name: "user_id", in: "path" }, example: 42 }),
});

const flag = (description: string) =>
  z
    .enum(["true", "false"])
    .transform((value) => value === "true")
    .optional()
    .openapi({ description, example: "true" });

export const AdminUserListQuerySchema = z.strictObject({
  search: singleLineText().min(1).max(100).optional().openapi({
    description: "Case-insensitive substring of the username or email address (`%` and `_` are plain characters).",
    example: "ada",
  }),
  role: z.enum(ROLES).optional().openapi({ description: "Only accounts with this role.", example: "lab" }),
  is_active: flag("Only active (`true`) or deactivated (`false`) accounts."),
  is_superuser: flag("Only superusers (`true`) or only other accounts (`false`)."),
  ...PageQuerySchema.shape,
});

export const AdminUserSchema = z
  .object({
    id: z.number().int(),
    email: z.string(),
    username: z.string(),
    is_active: z.boolean().openapi({ description: "A deactivated account cannot sign in; its tokens were revoked." }),
    is_verified: z.boolean(),
    is_superuser: z.boolean(),
    role: z.enum(ROLES).openapi({ description: "A superuser always has `lab`." }),
    totp_enabled: z.boolean().openapi({ description: "Two-step verification is on; a superuser needs it for admin powers." }),
    has_usable_password: z.boolean().openapi({ description: "The account has a password (identity-provider accounts may not)." }),
    profile_visibility: z.enum(PROFILE_VISIBILITIES),
    created_at: z.string().openapi({ example: "2026-05-01T12:00:00Z" }),
    updated_at: z.string().openapi({ example: "2026-05-01T12:00:00Z" }),
    last_login_at: z.string().nullable().openapi({ example: "2026-05-02T08:30:00Z" }),
    upload_file_count: z.number().int(),
    upload_total_bytes: z.number().int(),
  })
  .openapi("AdminUser", {
    example: {
      id: 42,
      email: "ada@example.org",
      username: "ada_l",
      is_active: true,
      is_verified: true,
      is_superuser: false,
      role: "contributor",
      totp_enabled: false,
      has_usable_password: true,
      profile_visibility: "public",
      created_at: "2026-05-01T12:00:00Z",
      updated_at: "2026-05-01T12:00:00Z",
      last_login_at: "2026-05-02T08:30:00Z",
      upload_file_count: 3,
      upload_total_bytes: 5242880,
    },
  });

const AdminUserUpdateSchema = z
  .strictObject({
    is_active: z.boolean().optional().openapi({ description: "`false` deactivates: every token is revoked at once and sign-in refused." }),
    is_verified: z.boolean().optional(),
    username: UsernameSchema.optional(),
  })
  .openapi("AdminUserUpdate", { example: { is_active: false } });

const RoleUpdateSchema = z
  .strictObject({ role: z.enum(ROLES).openapi({ description: "`contributor` or `lab`; a superuser always keeps `lab`." }) })
  .openapi("RoleUpdate", { example: { role: "lab" } });

const json = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const adminUser = (description: string) => ({ description, content: { "application/json": { schema: AdminUserSchema } } });

export const listUsers = createRoute({
  method: "get",
  path: "/admin/users",
  operationId: "adminListUsers",
  tags: ["Admin"],
  summary: "List accounts",
  description: `One page of accounts, ordered by id, optionally searched and filtered; unknown parameters 422. ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { query: AdminUserListQuerySchema },
  responses: {
    200: { description: "A page of accounts.", content: { "application/json": { schema: pagedSchema(AdminUserSchema, "AdminUserPage") } } },
    ...problemResponses(401, 403, 422),
  },
});

export const getUser = createRoute({
  method: "get",
  path: "/admin/users/{user_id}",
  operationId: "adminGetUser",
  tags: ["Admin"],
  summary: "Read an account",
  description: `${NOT_FOUND} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: UserIdParamsSchema },
  responses: { 200: adminUser("The account."), ...problemResponses(401, 403, 404, 422) },
});

export const updateUser = createRoute({
  method: "patch",
  path: "/admin/users/{user_id}",
  operationId: "adminUpdateUser",
  tags: ["Admin"],
  summary: "Update an account",
  description:
    "Activates or deactivates an account, sets its verified state, or renames it (the username rules of registration; " +
    "taken: 409 `USERNAME_TAKEN`). Deactivation revokes every token and pending login challenge of the account in the same " +
    "step; deactivating the last active superuser is 409 `LAST_SUPERUSER`. `role` has its own route; `is_superuser` and " +
    `other members are 422. Audited. ${NOT_FOUND} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: UserIdParamsSchema, body: json(AdminUserUpdateSchema) },
  responses: { 200: adminUser("The updated account."), ...problemResponses(401, 403, 404, 409, 413, 415, 422) },
});

export const setRole = createRoute({
  method: "put",
  path: "/admin/users/{user_id}/role",
  operationId: "adminSetUserRole",
  tags: ["Admin"],
  summary: "Set an account's role",
  description:
    "Sets `contributor` or `lab`. A superuser always has `lab`: setting `contributor` on one is 400 `SUPERUSER_ROLE_FIXED`. " +
    `Takes effect on the account's next request; audited with the old and new role. ${NOT_FOUND} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: UserIdParamsSchema, body: json(RoleUpdateSchema) },
  responses: { 200: adminUser("The account with its new role."), ...problemResponses(400, 401, 403, 404, 413, 415, 422) },
});

export const resetMfa = createRoute({
  method: "post",
  path: "/admin/users/{user_id}/mfa/reset",
  operationId: "adminResetUserMfa",
  tags: ["Admin"],
  summary: "Reset an account's two-step verification",
  description:
    "For a user who lost their authenticator and recovery codes: removes the TOTP seed, recovery codes and pending login " +
    "challenges, and revokes every session. The user then signs in with the password alone and may enrol again; no " +
    `replacement factor is set here. Also 204 for an account without TOTP (its sessions are still revoked). Audited. ${NOT_FOUND} ${ADMIN_ONLY}`,
  security: SIGNED_IN,
  request: { params: UserIdParamsSchema },
  responses: { 204: { description: "Reset." }, ...problemResponses(401, 403, 404, 422) },
});
