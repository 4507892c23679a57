import type { Services } from "../../../container";
import { MAX_SERVED_JSON_DEPTH, pathBeyondDepth } from "../../../lib/json-bounds";
import type { Logger } from "../../../lib/logger";
import { ApiError } from "../../../lib/problem";
import { cameraConfig } from "../config";
import { type CameraRelayApi, isAllowedCommand, type RelayCommand, type RelayOutcome, type TunnelStatus } from "../protocol";
import { previewThumbnailKey } from "./cameras";

/** What relaying needs: the relay objects (`bindings.CAMERA_RELAY`, whose variables also give the time-out) and the log. */
export type RelayServices = Pick<Services, "bindings" | "log">;

/** A command the device answered. */
export type RelayAnswer = Extract<RelayOutcome, { ok: true }>;

/** The relay object of one camera, typed by the interface it implements (../protocol.ts). */
export function relayObject(svc: Pick<Services, "bindings">, cameraId: string): CameraRelayApi {
  const relays = svc.bindings.CAMERA_RELAY;
  return relays.get(relays.idFromName(cameraId)) as unknown as CameraRelayApi;
}

export function commandNotAllowed(): ApiError {
  return new ApiError(403, { code: "RELAY_COMMAND_NOT_ALLOWED", detail: "Relay command is not allowed." });
}

const UNAVAILABLE: Record<Exclude<RelayOutcome, { ok: true }>["reason"], () => ApiError> = {
  offline: () =>
    new ApiError(503, {
      code: "CAMERA_OFFLINE",
      detail: "The camera has no live connection (no heartbeat in the last 90 s); check that it is powered and online.",
      headers: { "Retry-After": "30" },
    }),
  disconnected: () =>
    new ApiError(503, {
      code: "CAMERA_OFFLINE",
      detail: "The camera's connection closed before it answered.",
      headers: { "Retry-After": "30" },
    }),
  timeout: () =>
    new ApiError(503, { code: "CAMERA_TIMEOUT", detail: "The camera did not answer in time.", headers: { "Retry-After": "5" } }),
  busy: () =>
    new ApiError(503, {
      code: "CAMERA_BUSY",
      detail: "The camera has too many commands in flight; try again shortly.",
      headers: { "Retry-After": "1" },
    }),
  protocol: () => new ApiError(502, { code: "CAMERA_PROTOCOL_ERROR", detail: "The camera's answer did not follow the relay protocol." }),
  "too-large": () =>
    new ApiError(413, {
      code: "RELAY_COMMAND_TOO_LARGE",
      detail: "A relayed command is at most 64 KiB as a tunnel frame; send a smaller body.",
    }),
};

/** The relay object itself failed (reset by a deploy, overloaded): a relay failure, not a bug of the route. */
function relayUnavailable(log: Logger, cameraId: string, error: unknown): ApiError {
  log.warn("camera relay object unavailable", { camera_id: cameraId, error });
  return new ApiError(503, {
    code: "CAMERA_RELAY_UNAVAILABLE",
    detail: "The camera's relay is restarting; try again.",
    headers: { "Retry-After": "1" },
  });
}

/**
 * Relays one command to a camera through its relay object and returns the device's answer,
 * whatever its status. Commands off the allow-list are refused here, before they reach the
 * tunnel (403). No live heartbeat: 503 at once; no answer within the time-out: 503.
 */
export async function relayCommand(svc: RelayServices, cameraId: string, command: RelayCommand): Promise<RelayAnswer> {
  if (!isAllowedCommand(command.method, command.path)) throw commandNotAllowed();
  // RPC results come back as plain data; the cast drops the stub's Disposable wrapper type.
  let outcome: RelayOutcome;
  try {
    outcome = await relayObject(svc, cameraId).relay(command, cameraConfig(svc.bindings).relayTimeoutMs);
  } catch (error) {
    throw relayUnavailable(svc.log, cameraId, error);
  }
  if (outcome.ok) {
    // The answer goes back out in a response: one nested too deep to serialise is the device's fault, not a crash.
    if (pathBeyondDepth(outcome.data, MAX_SERVED_JSON_DEPTH) !== null) throw UNAVAILABLE.protocol();
    return outcome;
  }
  svc.log.warn("camera relay failed", {
    camera_id: cameraId,
    command: `${command.method} ${command.path.split("/").slice(0, 3).join("/")}`,
    reason: outcome.reason,
  });
  throw UNAVAILABLE[outcome.reason]();
}

/** The device answered with an error: 502, passing on the device's own words when it gave some. */
export function deviceRefused(answer: RelayAnswer): ApiError {
  const data = answer.data as { detail?: unknown } | null;
  const said = typeof data?.detail === "string" ? ` It said: ${data.detail.slice(0, 300)}` : "";
  return new ApiError(502, { code: "CAMERA_COMMAND_FAILED", detail: `The camera answered ${answer.status}.${said}` });
}

/** Relays a command whose answer must be a 2xx JSON object; anything else is 502. */
export async function relayForData(svc: RelayServices, cameraId: string, command: RelayCommand): Promise<Record<string, unknown>> {
  const answer = await relayCommand(svc, cameraId, command);
  if (answer.status < 200 || answer.status > 299) throw deviceRefused(answer);
  if (typeof answer.data !== "object" || answer.data === null || Array.isArray(answer.data)) {
    throw new ApiError(502, { code: "CAMERA_PROTOCOL_ERROR", detail: "The camera's answer was not a JSON object." });
  }
  return answer.data as Record<string, unknown>;
}

/** Whether the camera's tunnel is live (the relay object's view). */
export async function tunnelStatus(svc: Pick<Services, "bindings" | "log">, cameraId: string): Promise<TunnelStatus> {
  try {
    return await relayObject(svc, cameraId).status();
  } catch (error) {
    throw relayUnavailable(svc.log, cameraId, error);
  }
}

/**
 * What is left of a deleted camera outside D1: closes its tunnel, first telling the device to
 * unpair unless it asked itself, and removes its preview thumbnail. The camera's key is already
 * gone, so a device that missed this cannot reconnect; returns whether both steps succeeded (the
 * routes go on either way, the clean-up of a deleted account tries again).
 */
export async function retireCamera(svc: Pick<Services, "bindings" | "log">, cameraId: string, notify: boolean): Promise<boolean> {
  const outcomes = await Promise.allSettled([
    relayObject(svc, cameraId).unpair(notify),
    svc.bindings.UPLOADS.delete(previewThumbnailKey(cameraId)),
  ]);
  for (const outcome of outcomes) {
    if (outcome.status === "rejected") svc.log.warn("camera not fully retired", { camera_id: cameraId, error: outcome.reason });
  }
  return outcomes.every((outcome) => outcome.status === "fulfilled");
}
