import { importJWK } from "jose";
import type { AppRouteHandler } from "../../../../env";
import { requestOrigin } from "../../../../lib/http";
import { ApiError } from "../../../../lib/problem";
import { isoSeconds } from "../../../../lib/time";
import { requireVerified } from "../../../../middleware/guards";
import { enforceLimits, subjects } from "../../../../rate-limits/client";
import * as pairing from "../../services/camera-pairing";
import { toCamera } from "../cameras/cameras.schemas";
import type * as routes from "./pairing.routes";

/** The tunnel URL a paired device connects to: `wss://` wherever the API is served over https. */
function tunnelUrl(origin: string, cameraId: string): string {
  const url = new URL("/v1/plugins/rpi-cam/ws/connect", origin);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set("camera_id", cameraId);
  return url.toString();
}

export const registerPairing: AppRouteHandler<typeof routes.registerPairing> = async (c) => {
  const body = c.req.valid("json");
  try {
    await importJWK(body.public_key_jwk, "ES256");
  } catch {
    throw new ApiError(422, {
      code: "VALIDATION_FAILED",
      detail: "The request did not pass validation.",
      errors: [{ pointer: "/public_key_jwk", detail: "Not a point on the P-256 curve." }],
    });
  }
  const { expiresAt } = await pairing.registerPairing(c.get("services"), {
    code: body.code,
    fingerprint: body.fingerprint,
    publicKeyJwk: body.public_key_jwk,
    keyId: body.key_id,
  });
  c.header("Cache-Control", "no-store");
  return c.json({ code: body.code, expires_at: isoSeconds(expiresAt * 1000) }, 201);
};

export const pollPairing: AppRouteHandler<typeof routes.pollPairing> = async (c) => {
  const { code, fingerprint } = c.req.valid("query");
  const result = await pairing.pollPairing(c.get("services"), code, fingerprint);
  c.header("Cache-Control", "no-store");
  if (result.status === "waiting") return c.json({ status: "waiting" as const }, 200);
  c.get("log").info("camera paired", { camera_id: result.cameraId });
  return c.json(
    {
      status: "paired" as const,
      camera_id: result.cameraId,
      ws_url: tunnelUrl(requestOrigin(c), result.cameraId),
      auth_scheme: "device_assertion" as const,
      key_id: result.keyId,
    },
    200,
  );
};

export const claimPairing: AppRouteHandler<typeof routes.claimPairing> = async (c) => {
  const user = requireVerified(c);
  const body = c.req.valid("json");
  // Per code, whatever the IP or account: guessing at one code is bounded even from many addresses.
  await enforceLimits({ limiter: c.get("services").limiter, log: c.get("log") }, subjects.pairingCode(body.code), ["pairing-claim-code"], {
    userId: user.id,
  });
  const row = await pairing.claimPairing(c.get("services"), user.id, {
    code: body.code,
    name: body.camera_name,
    description: body.description ?? null,
  });
  c.get("log").info("camera claimed", { camera_id: row.id, user_id: user.id });
  c.header("Location", `/v1/plugins/rpi-cam/cameras/${row.id}`);
  return c.json(toCamera(row), 201);
};
