import { createRoute, z } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../../lib/openapi";
import { problemResponses } from "../../../lib/problem";
import { authenticate } from "../../../middleware/authenticate";
import { TokenPairSchema } from "../auth.schemas";

const CodeSchema = z.string().min(1).max(64).openapi({
  description: "A 6-digit code from the authenticator app, or one of the recovery codes (`xxxxx-xxxxx`; a recovery code works once).",
  example: "492039",
});
const CurrentPasswordSchema = z.string().max(1024).openapi({
  description:
    "The account's password; accounts without one (identity-provider sign-in only) need a session signed in within the last 10 minutes instead.",
});

const RecoveryCodesSchema = z
  .array(z.string())
  .openapi({ description: "Ten single-use codes; shown once, stored only as hashes.", example: ["k7m2p-qx9rt", "a3b4c-d5e6f"] });

const TotpSetupSchema = z
  .object({
    setup_token: z.string().openapi({ description: "Send back to /totp/confirm within 10 minutes." }),
    secret: z.string().openapi({
      description: "The seed in base32, for typing into an authenticator by hand.",
      example: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
    }),
    otpauth_uri: z.string().openapi({
      description: "The same as an `otpauth://` URI (show it as a QR code). SHA-1, 6 digits, 30 s.",
      example:
        "otpauth://totp/relab:ada%40example.org?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=relab&algorithm=SHA1&digits=6&period=30",
    }),
  })
  .openapi("TotpSetup");

const TotpConfirmBodySchema = z
  .strictObject({ setup_token: z.string().min(1).max(1024), code: CodeSchema, current_password: CurrentPasswordSchema.optional() })
  .openapi("TotpConfirmBody");

const TotpConfirmedSchema = z
  .object({
    recovery_codes: RecoveryCodesSchema,
    tokens: TokenPairSchema.optional().openapi({
      description: "The enrolling bearer client's new session (browsers get new cookies instead).",
    }),
  })
  .openapi("TotpConfirmed");

const TotpDisableBodySchema = z
  .strictObject({ code: CodeSchema, current_password: CurrentPasswordSchema.optional() })
  .openapi("TotpDisableBody");
const RegenerateBodySchema = z.strictObject({ code: CodeSchema }).openapi("RecoveryCodesRegenerateBody");
const ChallengeBodySchema = z.strictObject({ mfa_token: z.string().min(1).max(512), code: CodeSchema }).openapi("MfaChallengeBody");

const json = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });

const BUDGET =
  "Wrong passwords and codes count against the account's budget shared by every step-up and the login challenge " +
  "(3 a minute, 100 a day); past it, 429 `RATE_LIMITED` with `Retry-After`. A missing credential is 400 and does not count.";

export const totpSetup = createRoute({
  method: "post",
  path: "/auth/mfa/totp/setup",
  operationId: "totpSetup",
  tags: ["Auth"],
  summary: "Begin TOTP enrolment",
  description:
    "Creates a new authenticator seed and returns it with a setup token. Nothing changes until /totp/confirm. TOTP already on: 409.",
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  responses: {
    200: { description: "The new seed.", content: { "application/json": { schema: TotpSetupSchema } } },
    ...problemResponses(401, 403, 409, 503),
  },
});

export const totpConfirm = createRoute({
  method: "post",
  path: "/auth/mfa/totp/confirm",
  operationId: "totpConfirm",
  tags: ["Auth"],
  summary: "Confirm TOTP enrolment",
  description:
    "Turns TOTP on with the setup token and a current code of the new seed, after the step-up: `current_password` (missing 400, wrong 403). " +
    "Every existing session and refresh token of the account is revoked; this device gets a new session in the same response " +
    "(new cookies for a browser, a `tokens` member for a bearer client). Returns ten recovery codes, shown once. " +
    BUDGET,
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { body: json(TotpConfirmBodySchema) },
  responses: {
    200: { description: "TOTP is on.", content: { "application/json": { schema: TotpConfirmedSchema } } },
    ...problemResponses(400, 401, 403, 409, 413, 415, 422, 503),
  },
});

export const totpDisable = createRoute({
  method: "post",
  path: "/auth/mfa/totp/disable",
  operationId: "totpDisable",
  tags: ["Auth"],
  summary: "Turn TOTP off",
  description:
    "Needs `current_password` (when the account has one) and a `code` (authenticator or recovery code). Removes the seed and the recovery codes. " +
    "When the seed cannot be read any more (403 `TOTP_SEED_UNREADABLE` for an authenticator code: its data key was retired), a recovery code turns TOTP off. " +
    "A superuser without TOTP loses the superuser powers until enrolling again. " +
    BUDGET,
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { body: json(TotpDisableBodySchema) },
  responses: { 204: { description: "TOTP is off." }, ...problemResponses(400, 401, 403, 409, 413, 415, 422, 503) },
});

export const regenerateRecoveryCodes = createRoute({
  method: "post",
  path: "/auth/mfa/recovery-codes/regenerate",
  operationId: "regenerateRecoveryCodes",
  tags: ["Auth"],
  summary: "Replace the recovery codes",
  description:
    "Needs a `code` (authenticator, or a recovery code, which is spent). The old recovery codes stop working. Two regenerations at " +
    "once: one wins (200, its codes are the valid ones) and the other is 409 `RECOVERY_CODES_CHANGED`, spends nothing and shows no codes. " +
    BUDGET,
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { body: json(RegenerateBodySchema) },
  responses: {
    200: {
      description: "The new codes.",
      content: { "application/json": { schema: z.object({ recovery_codes: RecoveryCodesSchema }).openapi("RecoveryCodes") } },
    },
    ...problemResponses(400, 401, 403, 409, 413, 415, 422, 503),
  },
});

export const mfaChallenge = createRoute({
  method: "post",
  path: "/auth/mfa/challenge",
  operationId: "mfaChallenge",
  tags: ["Auth"],
  summary: "Answer the login challenge",
  description:
    "Completes the login of a TOTP account with the `mfa_token` of the 202 login answer and a current authenticator code or a recovery code. " +
    "Issues the credentials of the transport that started the login: a token pair (200) after the bearer login, cookies (204) after the " +
    "session login. A code works once: the same authenticator code cannot sign in twice, even concurrently. A wrong, replayed or spent code is " +
    "401 `MFA_CODE_INVALID` and leaves the challenge usable; an unknown, expired (10 minutes) or used challenge is 401 `MFA_TOKEN_INVALID`. " +
    "An authenticator code of an account whose seed was sealed with a retired data key is 403 `TOTP_SEED_UNREADABLE` (a recovery code still signs in; docs/operations.md). " +
    BUDGET,
  request: { body: json(ChallengeBodySchema) },
  responses: {
    200: { description: "Signed in (bearer login).", content: { "application/json": { schema: TokenPairSchema } } },
    204: { description: "Signed in (session login); the cookies are set." },
    ...problemResponses(400, 401, 403, 413, 415, 422, 503),
  },
});
