import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../lib/problem";
import { AcceptedSchema, EmailSchema, NewPasswordSchema, UsernameSchema } from "./auth.schemas";

const RegisterBodySchema = z
  .strictObject({ email: EmailSchema, password: NewPasswordSchema, username: UsernameSchema })
  .openapi("RegisterBody");

const RegisteredSchema = z
  .object({ id: z.number().int(), email: z.string(), username: z.string() })
  .openapi("RegisteredUser", { example: { id: 42, email: "ada@example.org", username: "ada_l" } });

const LinkTokenBodySchema = z
  .strictObject({ token: z.string().min(1).max(200).openapi({ description: "The token from the email link's fragment." }) })
  .openapi("VerifyBody");

const EmailBodySchema = z.strictObject({ email: EmailSchema }).openapi("EmailBody");

const VerifiedSchema = z
  .object({ id: z.number().int(), email: z.string(), username: z.string(), is_verified: z.boolean() })
  .openapi("VerifiedUser", { example: { id: 42, email: "ada@example.org", username: "ada_l", is_verified: true } });

const EmailCheckSchema = z
  .object({
    is_valid: z.boolean(),
    reason: z.string().nullable().openapi({ description: "Why the address is refused; null when valid." }),
  })
  .openapi("EmailValidation", { example: { is_valid: false, reason: "Addresses of disposable-email providers cannot hold an account." } });

const ResetBodySchema = z.strictObject({ token: z.string().min(1).max(200), password: NewPasswordSchema }).openapi("ResetPasswordBody");

const json = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });

export const register = createRoute({
  method: "post",
  path: "/auth/register",
  operationId: "register",
  tags: ["Auth"],
  summary: "Register",
  description:
    "Creates an unverified contributor account and emails a verification link. Password rules: 12 to 128 characters, not containing the " +
    "username or the email's local part, not on the common-password list, not in a known breach (Have I Been Pwned range check; " +
    "skipped when that service is unavailable). Rule failures: 422 at `/password`. Email taken (also as another alias of the same " +
    "mailbox) or username taken: 409. Disposable-email domain: 400. Any other member (role, is_superuser, ...): 422.",
  request: { body: json(RegisterBodySchema) },
  responses: {
    201: { description: "Registered; a verification email is on its way.", content: { "application/json": { schema: RegisteredSchema } } },
    ...problemResponses(400, 409, 413, 415, 422, 503),
  },
});

export const verify = createRoute({
  method: "post",
  path: "/auth/verify",
  operationId: "verifyEmail",
  tags: ["Auth"],
  summary: "Verify the email address",
  description:
    "Verifies the address with the token from the verification link (valid 24 hours, and only for the address it was sent to). Verifying twice is harmless.",
  request: { body: json(LinkTokenBodySchema) },
  responses: {
    200: { description: "The account is verified.", content: { "application/json": { schema: VerifiedSchema } } },
    ...problemResponses(400, 413, 415, 422, 503),
  },
});

export const requestVerifyToken = createRoute({
  method: "post",
  path: "/auth/request-verify-token",
  operationId: "requestVerifyToken",
  tags: ["Auth"],
  summary: "Send a new verification link",
  description:
    "Emails a new verification link when the address belongs to an active, unverified account. Answers the same 202 for every address.",
  request: { body: json(EmailBodySchema) },
  responses: {
    202: { description: "Accepted.", content: { "application/json": { schema: AcceptedSchema } } },
    ...problemResponses(413, 415, 422, 503),
  },
});

export const validateEmail = createRoute({
  method: "post",
  path: "/auth/validate-email",
  operationId: "validateEmail",
  tags: ["Auth"],
  summary: "Check an email address before registering",
  description:
    "Whether an address could register: it must be well-formed and not at a disposable-email provider. Does not reveal whether an account uses it.",
  request: { body: json(z.strictObject({ email: z.string().max(254) }).openapi("ValidateEmailBody")) },
  responses: {
    200: { description: "The verdict.", content: { "application/json": { schema: EmailCheckSchema } } },
    ...problemResponses(413, 415, 422),
  },
});

export const forgotPassword = createRoute({
  method: "post",
  path: "/auth/forgot-password",
  operationId: "forgotPassword",
  tags: ["Auth"],
  summary: "Ask for a password-reset link",
  description:
    "Emails a reset link (valid one hour) when the address belongs to an active account. Known, unknown and inactive addresses get the " +
    "same 202, padded to a minimum duration so that timing does not tell them apart either. Limits: 3 an hour per client IP and " +
    "3 an hour per mailbox (any address, known or not), then 429 `RATE_LIMITED`.",
  request: { body: json(EmailBodySchema) },
  responses: {
    202: { description: "Accepted.", content: { "application/json": { schema: AcceptedSchema } } },
    ...problemResponses(413, 415, 422, 503),
  },
});

export const resetPassword = createRoute({
  method: "post",
  path: "/auth/reset-password",
  operationId: "resetPassword",
  tags: ["Auth"],
  summary: "Set a new password with a reset link",
  description:
    "Sets the password with the token from the reset link. The token works once: it is bound to the password it was issued under. " +
    "Every session of the account is revoked, and a confirmation (without links or credentials) is emailed. Password rules as for registration.",
  request: { body: json(ResetBodySchema) },
  responses: { 204: { description: "The password is changed." }, ...problemResponses(400, 413, 415, 422, 503) },
});
