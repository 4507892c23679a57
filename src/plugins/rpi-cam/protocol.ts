// The private device contract of the rpi-cam plugin (docs/camera.md): the tunnel's frames, its
// limits, and the commands the backend may relay. Shared by the Worker and the camera's relay
// object; versioned apart from the REST API and kept out of its OpenAPI schema.

/** Largest text frame either side may send (bytes of UTF-8); larger closes the tunnel with 1009. */
export const MAX_TEXT_FRAME_BYTES = 64 * 1024;
/** Largest binary frame the device may send (an HLS segment, say); larger closes with 1009. */
export const MAX_BINARY_FRAME_BYTES = 10 * 1024 * 1024;
/** The relay object pings the device this often. */
export const HEARTBEAT_INTERVAL_MS = 30_000;
/** A device silent for longer than this is offline: relays fail at once and the tunnel is closed. */
export const OFFLINE_AFTER_MS = 90_000;
/** How long a relayed command may wait for the device's answer unless configured otherwise. */
export const DEFAULT_RELAY_TIMEOUT_MS = 30_000;
/** Commands one camera may have in flight at once (the bounded relay queue). */
export const MAX_PENDING_COMMANDS = 16;
/** The WebSocket close code for a frame over the limits (RFC 6455, "message too big"). */
export const CLOSE_TOO_BIG = 1009;

/** The header through which the Worker tells the relay object which camera it authenticated. */
export const CAMERA_ID_HEADER = "x-relab-camera-id";

/** Close codes of the relay object, in the private-use range. */
export const CLOSE_CODES = {
  replaced: 4000,
  unpaired: 4001,
  heartbeatTimeout: 4002,
  ownerInactive: 4003,
} as const;

/** A command sent to the device: the relay envelope of the spec. */
export interface RelayCommand {
  method: string;
  path: string;
  params?: Record<string, unknown>;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A frame to the device. */
export interface RequestFrame extends Required<Omit<RelayCommand, "body">> {
  type: "request";
  id: string;
  body: unknown;
}

/** The device's answer to one request frame; a binary frame follows when `has_binary`. */
export interface ResponseFrame {
  type: "response";
  id: string;
  status: number;
  content_type: string | null;
  has_binary: boolean;
  data: unknown;
}

/** The answer a relay gives the Worker. */
export type RelayOutcome =
  | { ok: true; status: number; contentType: string | null; data: unknown; binary: Uint8Array | null }
  | { ok: false; reason: "offline" | "timeout" | "busy" | "disconnected" | "protocol" | "too-large" };

// Method and path pattern of every command a device may receive (decisions.md, Allowlist). The
// device enforces the same list; the backend refuses anything else before it reaches the tunnel.
const ALLOWED: ReadonlyArray<{ methods: readonly string[]; path: RegExp }> = [
  { methods: ["GET"], path: /^\/camera$/ },
  { methods: ["GET", "PATCH"], path: /^\/camera\/controls$/ },
  { methods: ["PUT"], path: /^\/camera\/focus$/ },
  { methods: ["POST"], path: /^\/captures$/ },
  { methods: ["POST"], path: /^\/preview\/start$/ },
  { methods: ["POST"], path: /^\/preview\/stop$/ },
  { methods: ["GET"], path: /^\/preview\/hls\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]+$/ },
  { methods: ["GET", "POST", "DELETE"], path: /^\/streams\/youtube$/ },
  { methods: ["GET"], path: /^\/system\/local-access$/ },
  { methods: ["GET"], path: /^\/system\/telemetry$/ },
  { methods: ["DELETE"], path: /^\/pairing$/ },
];

/**
 * Whether the backend may relay `method path` to a device. HLS paths must also pass
 * `isSafeHlsPath`: no `..` segment, no backslash and no control character, even once
 * percent-decoded, so a path can never climb out of the preview directory on the device.
 */
export function isAllowedCommand(method: string, path: string): boolean {
  const entry = ALLOWED.find((candidate) => candidate.path.test(path));
  if (!entry || !entry.methods.includes(method)) return false;
  return path.startsWith("/preview/hls/") ? isSafeHlsPath(path.slice("/preview/hls/".length)) : true;
}

/**
 * Whether an HLS file path (relative to the preview directory) is safe to relay: decoded
 * repeatedly until stable (so `%252e%252e` counts as `..`), it has no empty, `.` or `..`
 * segment, no backslash, no NUL or other control character, and is at most 256 characters.
 */
export function isSafeHlsPath(path: string): boolean {
  const decoded = decodeFully(path);
  if (decoded === null || decoded.length === 0 || decoded.length > 256) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(decoded)) return false;
  return decoded.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..");
}

// Percent-decodes until nothing changes; null for malformed escapes or more than four layers.
function decodeFully(value: string): string | null {
  let current = value;
  for (let round = 0; round < 5; round++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return null;
    }
    if (next === current) return current;
    current = next;
  }
  return null;
}

/**
 * The UTF-8 length of a text frame for the limit check: short texts (at most a third of the limit
 * in UTF-16 units, so surely within it) are not encoded and report their UTF-16 length instead.
 */
export function textFrameBytes(text: string): number {
  // Each UTF-16 unit is at most 3 bytes of UTF-8.
  if (text.length * 3 <= MAX_TEXT_FRAME_BYTES) return text.length;
  return new TextEncoder().encode(text).length;
}

/** Parses a device frame's text: a response, a pong or a ping; null for anything else. */
export function parseDeviceFrame(text: string): ResponseFrame | { type: "pong" } | { type: "ping" } | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const frame = value as Record<string, unknown>;
  if (frame.type === "pong" || frame.type === "ping") return { type: frame.type };
  if (frame.type !== "response") return null;
  if (typeof frame.id !== "string" || frame.id.length === 0 || frame.id.length > 64) return null;
  if (!Number.isInteger(frame.status) || (frame.status as number) < 100 || (frame.status as number) > 599) return null;
  const contentType = frame.content_type ?? null;
  if (contentType !== null && typeof contentType !== "string") return null;
  if (frame.has_binary !== undefined && typeof frame.has_binary !== "boolean") return null;
  return {
    type: "response",
    id: frame.id,
    status: frame.status as number,
    content_type: contentType as string | null,
    has_binary: frame.has_binary === true,
    data: frame.data ?? null,
  };
}

/** The tunnel's state as the status route reports it. */
export interface TunnelStatus {
  online: boolean;
  /** Epoch ms, or null when no tunnel is open. */
  connectedAt: number | null;
  lastSeenAt: number | null;
}

/**
 * What the Worker calls on a camera's relay object (durable-objects/camera-relay.ts implements
 * it). Declared here, apart from the class, so that services the object itself uses can call it
 * without a module cycle.
 */
export interface CameraRelayApi {
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>;
  relay(command: RelayCommand, timeoutMs: number): Promise<RelayOutcome>;
  status(): Promise<TunnelStatus>;
  unpair(notify: boolean): Promise<void>;
  watchStream(cameraId: string, broadcastId: string): Promise<void>;
  unwatchStream(broadcastId: string): Promise<void>;
}
