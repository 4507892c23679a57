import { createRoute, z } from "@hono/zod-openapi";
import { PROFILE_VISIBILITIES, ROLES } from "../../db/schema";
import { SIGNED_IN } from "../../lib/openapi";
import { isValidOrcid } from "../../lib/orcid";
import { problemResponses } from "../../lib/problem";
import { authenticate } from "../../middleware/authenticate";
import { EmailSchema, NewPasswordSchema, UsernameSchema } from "../auth/auth.schemas";

export const MeSchema = z
  .object({
    id: z.number().int(),
    email: z.string(),
    username: z.string(),
    is_active: z.boolean(),
    is_verified: z.boolean().openapi({ description: "Only verified accounts may create or change records." }),
    is_superuser: z.boolean(),
    role: z.enum(ROLES),
    totp_enabled: z.boolean().openapi({ description: "Two-step verification is on; superuser powers need it." }),
    has_usable_password: z.boolean().openapi({
      description:
        "The account has a password. Accounts made by Google or GitHub sign-in have none until one is set through forgot-password.",
    }),
    preferences: z.object({ profile_visibility: z.enum(PROFILE_VISIBILITIES) }),
    created_at: z.string().openapi({ example: "2026-05-01T12:00:00Z" }),
    updated_at: z.string().openapi({ example: "2026-05-01T12:00:00Z" }),
    last_login_at: z.string().nullable().openapi({ example: "2026-05-01T12:00:00Z" }),
    upload_quota_files: z.number().int(),
    upload_quota_bytes: z.number().int(),
    upload_file_count: z.number().int(),
    upload_total_bytes: z.number().int(),
    image_upload_max_bytes: z.number().int(),
    image_upload_max_pixels: z.number().int(),
    terms_accepted_version: z.number().int().nullable().openapi({
      description:
        "The version of the contributor terms you accepted (`POST /v1/users/me/contributor-terms`); null when none. Dataset releases hold only contributions of accounts that accepted them.",
      example: 1,
    }),
    terms_accepted_at: z
      .string()
      .nullable()
      .openapi({ description: "When you accepted them; null when not accepted.", example: "2026-05-01T12:00:00Z" }),
    orcid: z
      .string()
      .nullable()
      .openapi({ description: "Your ORCID iD, shown with your username where a release credits you.", example: "0000-0002-1825-0097" }),
    release_credit: z.boolean().openapi({
      description:
        "Releases built from now on name you (username and ORCID iD) as a contributor (DataCite `DataCollector`) when they hold " +
        "records of yours; off, you appear under a pseudonym only. Published releases never change.",
    }),
  })
  .openapi("Me", {
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
      preferences: { profile_visibility: "public" },
      created_at: "2026-05-01T12:00:00Z",
      updated_at: "2026-05-01T12:00:00Z",
      last_login_at: "2026-05-02T08:30:00Z",
      upload_quota_files: 1000,
      upload_quota_bytes: 3221225472,
      upload_file_count: 0,
      upload_total_bytes: 0,
      image_upload_max_bytes: 10485760,
      image_upload_max_pixels: 12582912,
      terms_accepted_version: 1,
      terms_accepted_at: "2026-05-01T12:05:00Z",
      orcid: "0000-0002-1825-0097",
      release_credit: true,
    },
  });

const MeUpdateSchema = z
  .strictObject({
    username: UsernameSchema.optional(),
    email: EmailSchema.optional(),
    password: NewPasswordSchema.optional(),
    preferences: z.strictObject({ profile_visibility: z.enum(PROFILE_VISIBILITIES).optional() }).optional(),
    current_password: z.string().max(1024).optional().openapi({ description: "Required to change `email` or `password`." }),
    mfa_code: z.string().max(64).optional().openapi({ description: "With TOTP enrolled: an authenticator or recovery code." }),
    orcid: z
      .string()
      .refine(isValidOrcid, { message: "Must be an ORCID iD of the form 0000-0000-0000-000X with a valid check digit (ISO 7064 11-2)." })
      .nullable()
      .optional()
      .openapi({
        description: "Your ORCID iD (`0000-0002-1825-0097`), checked by its check digit; null removes it.",
        example: "0000-0002-1825-0097",
      }),
    release_credit: z.boolean().optional().openapi({
      description:
        "Opt in (true) to be named in releases built from now on, or out (false, the default); published releases keep what they say.",
    }),
  })
  .openapi("MeUpdate", { example: { preferences: { profile_visibility: "community" } } });

export const getMe = createRoute({
  method: "get",
  path: "/users/me",
  operationId: "getMe",
  tags: ["Users"],
  summary: "Read your account",
  description: "The signed-in account with its role, verification state, preferences, upload quotas and usage.",
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  responses: {
    200: { description: "Your account.", content: { "application/json": { schema: MeSchema } } },
    ...problemResponses(401, 503),
  },
});

export const updateMe = createRoute({
  method: "patch",
  path: "/users/me",
  operationId: "updateMe",
  tags: ["Users"],
  summary: "Update your account",
  description:
    "Changes username, preferences, ORCID iD (`orcid`: 422 when not of the form `0000-0000-0000-000X` with a valid ISO 7064 " +
    "11-2 check digit) and release credit (`release_credit`: releases built afterwards name you by username and ORCID iD). Changing `email` or `password` also needs `current_password` (missing: 400, wrong: 403), " +
    "revokes every token of the account (sign in again afterwards; a browser's cookies are cleared), and sends notices: a verification " +
    "link to a new address (the account becomes unverified) and a security notice to the old one; a notice after a password change. " +
    "`role` and other account-control members are refused with 422. Wrong current passwords share the account's step-up budget " +
    "(3 a minute, 100 a day, across every step-up and challenge route); past it, 429 `RATE_LIMITED` with `Retry-After`.",
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { body: { required: true, content: { "application/json": { schema: MeUpdateSchema } } } },
  responses: {
    200: { description: "The updated account.", content: { "application/json": { schema: MeSchema } } },
    ...problemResponses(400, 401, 403, 409, 413, 415, 422, 503),
  },
});
