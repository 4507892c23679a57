import { z } from "@hono/zod-openapi";
import { USERNAME_PATTERN } from "../../auth/account-names";
import { PASSWORD_MAX_LENGTH } from "../../auth/password-policy";

export const EmailSchema = z.email({ error: "Must be an email address." }).max(254).openapi({ example: "ada@example.org" });

export const UsernameSchema = z
  .string()
  .regex(USERNAME_PATTERN, { error: "Username must be 2 to 50 characters of lower-case letters, digits and underscores." })
  .openapi({
    description: "2 to 50 characters of `a-z`, `0-9` and `_`; reserved words (me, admin, api, ...) are refused.",
    example: "ada_l",
  });

/** A new password: the length rule is checked here; the other rules run in the service (422 at `/password`). */
export const NewPasswordSchema = z
  .string()
  .max(PASSWORD_MAX_LENGTH * 4)
  .openapi({
    description:
      "12 to 128 characters; must not contain the username or the email's local part; common and breached passwords are refused.",
    example: "violet-kettle-47-orbit",
  });

const credentialMembers = {
  username: z.string().min(1).max(320).openapi({
    description: "The account's email address or username.",
    example: "ada@example.org",
  }),
  password: z.string().min(1).max(1024).openapi({ example: "violet-kettle-47-orbit" }),
};

export const CredentialsJsonSchema = z.strictObject(credentialMembers).openapi("Credentials");

/** The OAuth 2.0 password-grant form some clients send; its extra members are accepted and ignored. */
export const CredentialsFormSchema = z
  .object({
    ...credentialMembers,
    grant_type: z.literal("password").optional(),
    scope: z.string().optional(),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
  })
  .openapi("CredentialsForm");

export const credentialsBody = {
  description: "`username` is the email address or the username. JSON, or a form (`application/x-www-form-urlencoded`).",
  content: {
    "application/json": { schema: CredentialsJsonSchema },
    "application/x-www-form-urlencoded": { schema: CredentialsFormSchema },
  },
};

export const TokenPairSchema = z
  .object({
    access_token: z.string(),
    refresh_token: z.string(),
    token_type: z.literal("bearer"),
    expires_in: z.number().int().openapi({ description: "Seconds the access token lives.", example: 900 }),
  })
  .openapi("TokenPair", {
    example: {
      access_token: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MiJ9.c2lnbmF0dXJl",
      refresh_token: "Xq2h0m3b2cT0pWq2b1n7dG9rZW4tZXhhbXBsZS1vbmx5",
      token_type: "bearer",
      expires_in: 900,
    },
  });

export const AcceptedSchema = z
  .object({ detail: z.string() })
  .openapi("Accepted", { example: { detail: "If an account with this address exists, an email is on its way." } });

export const MfaRequiredSchema = z
  .object({
    mfa_required: z.literal(true),
    mfa_token: z.string().openapi({ description: "Challenge token for POST /v1/auth/mfa/challenge; valid 10 minutes, used once." }),
  })
  .openapi("MfaRequired", { example: { mfa_required: true, mfa_token: "kP3xQ9vT2mW7bN4cR8sY1uZ6aE5dF0gH-jL2oI9pK3q" } });

/** The 202 both login routes answer for an account with TOTP. */
export const mfaRequiredResponse = {
  202: {
    description: "Password accepted; the account has two-step verification: answer the challenge with POST /v1/auth/mfa/challenge.",
    content: { "application/json": { schema: MfaRequiredSchema } },
  },
};
