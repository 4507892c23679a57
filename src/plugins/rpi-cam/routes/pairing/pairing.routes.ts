import { createRoute, z } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../../../lib/openapi";
import { problemResponses } from "../../../../lib/problem";
import { authenticate } from "../../../../middleware/authenticate";
import { PAIRING_ALPHABET, PAIRING_CODE_LENGTH } from "../../services/camera-pairing";
import { CameraDescriptionSchema, CameraNameSchema, CameraSchema } from "../cameras/cameras.schemas";

const json = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const base64Url = (length: number) => z.string().regex(new RegExp(`^[A-Za-z0-9_-]{${length}}$`), `Must be ${length} base64url characters.`);

/** A pairing code: typed by people, so case is forgiven; anything off the alphabet is 422. */
export const PairingCodeSchema = z
  .string()
  .transform((code) => code.trim().toUpperCase())
  .pipe(
    z
      .string()
      .regex(
        new RegExp(`^[${PAIRING_ALPHABET}]{${PAIRING_CODE_LENGTH}}$`),
        `Must be ${PAIRING_CODE_LENGTH} characters of ${PAIRING_ALPHABET}.`,
      ),
  )
  .openapi({ example: "K7M2QX" });

const FingerprintSchema = z.string().regex(/^[\x21-\x7e]{16,256}$/, "Must be 16 to 256 visible ASCII characters.");

/** The device's P-256 public key. A private member (`d`) is refused, not silently dropped. */
const PublicKeyJwkSchema = z
  .looseObject({
    kty: z.literal("EC"),
    crv: z.literal("P-256"),
    x: base64Url(43),
    y: base64Url(43),
    alg: z.literal("ES256").optional(),
    use: z.literal("sig").optional(),
  })
  .refine((jwk) => !("d" in jwk), { message: "Send the public key only: a `d` member is a private key.", path: ["d"] })
  .transform(({ kty, crv, x, y }) => ({ kty, crv, x, y }));

export const RegisterBodySchema = z.strictObject({
  code: PairingCodeSchema,
  fingerprint: FingerprintSchema,
  public_key_jwk: PublicKeyJwkSchema,
  key_id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, "Must be 1 to 64 characters of letters, digits and ._-"),
});

export const ClaimBodySchema = z
  .strictObject({ code: PairingCodeSchema, camera_name: CameraNameSchema, description: CameraDescriptionSchema })
  .openapi("CameraClaim", { example: { code: "K7M2QX", camera_name: "Bench camera" } });

export const PollQuerySchema = z.strictObject({ code: PairingCodeSchema, fingerprint: FingerprintSchema });

const PollSchema = z.union([
  z.object({ status: z.literal("waiting") }),
  z.object({
    status: z.literal("paired"),
    camera_id: z.string(),
    ws_url: z.string(),
    auth_scheme: z.literal("device_assertion"),
    key_id: z.string(),
  }),
]);

// Register and poll are the device's side of pairing: the private device contract, kept out of
// the REST schema (spec, Versioning 5) and described in docs/camera.md.
export const registerPairing = createRoute({
  method: "post",
  path: "/plugins/rpi-cam/pairing/register",
  hide: true,
  request: { body: json(RegisterBodySchema) },
  responses: {
    201: {
      description: "Registered.",
      content: { "application/json": { schema: z.object({ code: z.string(), expires_at: z.string() }) } },
    },
  },
});

export const pollPairing = createRoute({
  method: "get",
  path: "/plugins/rpi-cam/pairing/poll",
  hide: true,
  request: { query: PollQuerySchema },
  responses: { 200: { description: "The pairing's state.", content: { "application/json": { schema: PollSchema } } } },
});

export const claimPairing = createRoute({
  method: "post",
  path: "/plugins/rpi-cam/pairing/claim",
  operationId: "claimCameraPairing",
  tags: ["Cameras"],
  summary: "Pair a camera with your account",
  description:
    "Claims the 6-character code a camera shows while pairing (10 minutes from when it registered it) and creates the camera. " +
    "Needs a verified account. An unknown or expired code: 404 `PAIRING_CODE_NOT_FOUND`; a code claimed already: 409 " +
    "`PAIRING_CODE_ALREADY_CLAIMED`. Limited to 10 claims a minute per client IP and 5 attempts per code in 10 minutes (429). " +
    "The camera learns its id on its next poll and then opens its tunnel.",
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { body: json(ClaimBodySchema) },
  responses: {
    201: { description: "The new camera; `Location` names it.", content: { "application/json": { schema: CameraSchema } } },
    ...problemResponses(401, 403, 404, 409, 413, 415, 422),
  },
});
