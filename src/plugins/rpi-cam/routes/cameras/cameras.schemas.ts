import { z } from "@hono/zod-openapi";
import { multilineText, singleLineText } from "../../../../lib/text";
import { isoSeconds } from "../../../../lib/time";
import type { TunnelStatus } from "../../protocol";
import type { CameraRow } from "../../services/cameras";

const EXAMPLE_ID = "5b3c2a9e-8f41-4d7e-9a0b-1c2d3e4f5a6b";

export const CameraIdParamsSchema = z.object({
  camera_id: z.uuid({ error: "Must be a camera id (a UUID)." }).openapi({ param: { name: "camera_id", in: "path" }, example: EXAMPLE_ID }),
});

export const CameraNameSchema = singleLineText().trim().min(1).max(100).openapi({ example: "Bench camera" });
export const CameraDescriptionSchema = multilineText().max(500).nullable().optional().openapi({ example: "Above the teardown bench" });

export const CameraStatusSchema = z
  .object({
    connection: z
      .enum(["online", "offline"])
      .openapi({ description: "`online` while the tunnel is open and the last heartbeat is under 90 s old." }),
    last_seen_at: z
      .string()
      .nullable()
      .openapi({ description: "Last heartbeat or answer from the device; null if it never connected.", example: "2026-05-01T12:00:00Z" }),
    connected_at: z.string().nullable().openapi({ description: "When the live tunnel opened; null when offline." }),
  })
  .openapi("CameraStatus");

export const CameraSchema = z
  .object({
    id: z.string().openapi({ example: EXAMPLE_ID }),
    name: z.string(),
    description: z.string().nullable(),
    owner_id: z.number().int(),
    last_seen_at: z
      .string()
      .nullable()
      .openapi({ description: "Last heartbeat recorded (at most a minute behind; the status has the exact one)." }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Camera");

export const CameraDetailSchema = CameraSchema.extend({
  status: CameraStatusSchema.optional().openapi({ description: "With `include_status=true`." }),
  telemetry: z
    .record(z.string(), z.unknown())
    .nullable()
    .optional()
    .openapi({ description: "With `include_telemetry=true`: the device's telemetry, or null when it is offline or did not answer." }),
}).openapi("CameraDetail");

export const CameraUpdateSchema = z
  .strictObject({ name: CameraNameSchema.optional(), description: CameraDescriptionSchema })
  .openapi("CameraUpdate", { example: { name: "Lab camera 2" } });

const flag = z
  .enum(["true", "false"])
  .default("false")
  .transform((value) => value === "true");

export const CameraReadQuerySchema = z.strictObject({
  include_status: flag.openapi({ description: "Add the tunnel's `status` (asks the camera's relay object)." }),
  include_telemetry: flag.openapi({ description: "Add the device's `telemetry` (relays `GET /system/telemetry`; null when offline)." }),
});

/** The device-reported telemetry (temperatures, load, storage...), passed on as the device sent it. */
export const TelemetrySchema = z.record(z.string(), z.unknown()).openapi("CameraTelemetry", {
  example: { cpu_temperature_c: 51.2, cpu_percent: 12.5, memory_percent: 38, disk_free_bytes: 12_884_901_888 },
});

export const LocalAccessSchema = z
  .object({
    header_name: z.literal("X-API-Key").openapi({ description: "Send the key in this header to the device's local API." }),
    api_key: z.string().openapi({ description: "The device-local key: valid only on the device's own API, never on this service." }),
    local_urls: z.array(z.string()).openapi({ description: "Addresses where the device answers on its local network." }),
  })
  .openapi("CameraLocalAccess");

export function toCamera(row: CameraRow): z.infer<typeof CameraSchema> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    owner_id: row.owner_id,
    last_seen_at: row.last_seen_at === null ? null : isoSeconds(row.last_seen_at * 1000),
    created_at: isoSeconds(row.created_at * 1000),
    updated_at: isoSeconds(row.updated_at * 1000),
  };
}

/** The tunnel's status, falling back to D1's `last_seen_at` when the object has no tunnel. */
export function toStatus(status: TunnelStatus, row: CameraRow): z.infer<typeof CameraStatusSchema> {
  const lastSeen = status.lastSeenAt ?? (row.last_seen_at === null ? null : row.last_seen_at * 1000);
  return {
    connection: status.online ? "online" : "offline",
    last_seen_at: lastSeen === null ? null : isoSeconds(lastSeen),
    connected_at: status.connectedAt === null ? null : isoSeconds(status.connectedAt),
  };
}
