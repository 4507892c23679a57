import { createRoute, z } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../../lib/openapi";
import { problemResponses } from "../../../lib/problem";
import { authenticate } from "../../../middleware/authenticate";
import { DELETION_CONTENT } from "../../../services/accounts/deletion";

const StepUpBodySchema = z
  .strictObject({
    current_password: z.string().max(1024).optional().openapi({ description: "Required when the account has a password." }),
    mfa_code: z.string().max(64).optional().openapi({ description: "With TOTP: an authenticator code or a recovery code (spent)." }),
  })
  .openapi("StepUpBody", { example: { current_password: "violet-kettle-47-orbit", mfa_code: "492039" } });

const UserIdParamsSchema = z.object({
  user_id: z.coerce
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .openapi({ param: { in: "path" }, example: 42 }),
});

const ContentQuerySchema = z.strictObject({
  content: z.enum(DELETION_CONTENT).default("anonymize").openapi({
    description:
      "`anonymize` (default): the products move to an anonymous system account and stay public without the owner's name. `delete`: they are deleted.",
  }),
});

const BUDGET = "Wrong passwords and codes count against the shared step-up budget (3 a minute, 100 a day; then 429).";
const ERASED =
  "The email address, username, linked sign-ins and cameras are erased, every session ends at once, and a notice goes to the former address. ";

export const deleteMe = createRoute({
  method: "delete",
  path: "/users/me",
  operationId: "deleteMe",
  tags: ["Users"],
  summary: "Delete your account",
  description:
    "Step-up: `current_password` when the account has one, and with TOTP also `mfa_code` (missing: 400, wrong: 403); an account with " +
    "neither needs a session signed in within the last 10 minutes (otherwise 403 `RECENT_SIGN_IN_REQUIRED`). " +
    ERASED +
    "Your products and their media stay public under an anonymous system account, without your name. A browser's cookies are cleared. " +
    "The last active superuser cannot be deleted (409). " +
    BUDGET,
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { body: { required: false, content: { "application/json": { schema: StepUpBodySchema } } } },
  responses: { 204: { description: "The account is deleted." }, ...problemResponses(400, 401, 403, 409, 413, 415, 422, 503) },
});

export const adminDeleteUser = createRoute({
  method: "delete",
  path: "/admin/users/{user_id}",
  operationId: "adminDeleteUser",
  tags: ["Admin"],
  summary: "Delete a user's account",
  description:
    "Superuser with TOTP. Step-up of the acting superuser: `current_password` and `mfa_code` in the body. " +
    ERASED +
    "`content` decides what happens to the products. Unknown user: 404; the last active superuser: 409. Audited. " +
    BUDGET,
  security: SIGNED_IN,
  request: {
    params: UserIdParamsSchema,
    query: ContentQuerySchema,
    body: { required: true, content: { "application/json": { schema: StepUpBodySchema } } },
  },
  responses: { 204: { description: "The account is deleted." }, ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422, 503) },
});
