import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { products, timestamps, users } from "../../db/schema";

// The camera plugin's tables (drizzle.config.ts reads this file beside src/db/schema.ts). They
// point at the core's users and products; the core never names them. What the plugin must still
// do outside D1 when the core deletes what its rows point at is kept by triggers (migration
// 0018) in the clean-up tables at the end, in the deleting transaction itself, and worked off on
// the core's domain events (docs/architecture.md).

/**
 * Paired camera devices. The backend keeps the device's public key only
 * (an ES256 JWK): devices prove who they are with short-lived assertions signed by the private
 * key they never hand over. Gone with their owner's account (ON DELETE CASCADE).
 */
export const cameras = sqliteTable(
  "cameras",
  {
    /** A UUID (decisions.md: cameras have string ids). */
    id: text("id").primaryKey(),
    owner_id: integer("owner_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    /** The `kid` every assertion of this camera must name. */
    key_id: text("key_id").notNull(),
    /** `{kty, crv, x, y}` of the device's P-256 public key, as JSON. */
    public_key_jwk: text("public_key_jwk").notNull(),
    /** Unix seconds of the last heartbeat the camera's relay object saw (written at most once a minute). */
    last_seen_at: integer("last_seen_at"),
    ...timestamps,
  },
  (t) => [index("cameras_owner_idx").on(t.owner_id, t.created_at)],
);

/**
 * Pairing codes a device registered and is polling, for ten minutes. `camera_id` is set by the
 * owner's claim; the device's one `paired` poll deletes the row.
 */
export const cameraPairings = sqliteTable(
  "camera_pairings",
  {
    code: text("code").primaryKey(),
    /** SHA-256 (hex) of the device's fingerprint: the poll compares digests in constant time. */
    fingerprint_hash: text("fingerprint_hash").notNull(),
    key_id: text("key_id").notNull(),
    public_key_jwk: text("public_key_jwk").notNull(),
    camera_id: text("camera_id").references(() => cameras.id, { onDelete: "cascade" }),
    /** Unix seconds. */
    expires_at: integer("expires_at").notNull(),
    created_at: integer("created_at").notNull().default(sql`(unixepoch())`),
  },
  (t) => [index("camera_pairings_expires_idx").on(t.expires_at)],
);

/** `jti`s of device assertions already used, kept until the assertion would have expired anyway. */
export const cameraAssertionJtis = sqliteTable(
  "camera_assertion_jtis",
  {
    camera_id: text("camera_id")
      .notNull()
      .references(() => cameras.id, { onDelete: "cascade" }),
    jti: text("jti").notNull(),
    /** Unix seconds: the assertion's `exp`. */
    expires_at: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.camera_id, t.jti] }), index("camera_assertion_jtis_expires_idx").on(t.camera_id, t.expires_at)],
);

/**
 * A camera's live stream to the video platform, while it runs (at most one per camera). The
 * stream key is sealed (AES-256-GCM, context `stream-key:<camera_id>`): it is a credential to
 * broadcast on the owner's channel. Gone when the stream ends, or with its camera, owner or product.
 */
export const cameraStreams = sqliteTable("camera_streams", {
  camera_id: text("camera_id")
    .primaryKey()
    .references(() => cameras.id, { onDelete: "cascade" }),
  user_id: integer("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  product_id: integer("product_id")
    .notNull()
    .references(() => products.id, { onDelete: "cascade" }),
  broadcast_id: text("broadcast_id").notNull(),
  stream_id: text("stream_id").notNull(),
  stream_key_sealed: text("stream_key_sealed").notNull(),
  title: text("title").notNull(),
  description: text("description"),
  privacy_status: text("privacy_status", { enum: ["public", "private", "unlisted"] }).notNull(),
  started_at: integer("started_at").notNull(),
  /** The broadcast's life-cycle status as last read from the platform, reused for a while (API quota). */
  platform_status: text("platform_status"),
  /** Unix seconds of that read; null before the first. */
  platform_checked_at: integer("platform_checked_at"),
});

/**
 * Cameras that went with their owner's account (the cascade from `users`), written by the trigger
 * `camera_retired_with_owner`: their devices are still to be told to unpair and their tunnels
 * closed, and their preview thumbnails removed. Worked off on `account.deleted`, and by the
 * scheduled reconciliation for whatever an event missed; a row goes once its camera is retired.
 */
export const cameraRetirements = sqliteTable("camera_retirements", {
  camera_id: text("camera_id").primaryKey(),
  owner_id: integer("owner_id").notNull(),
  /** Unix seconds. */
  created_at: integer("created_at").notNull().default(sql`(unixepoch())`),
});

/**
 * Live streams whose product was deleted (the cascade from `products`), written by the trigger
 * `camera_stream_ended_with_product` with what ending them needs (never the stream key): the device
 * is still to be told to stop, the broadcast completed and its ingest stream deleted. Worked off on
 * `records.deleted`, and by the scheduled reconciliation; a row goes once its stream is ended.
 */
export const cameraStreamEndings = sqliteTable(
  "camera_stream_endings",
  {
    camera_id: text("camera_id").notNull(),
    broadcast_id: text("broadcast_id").notNull(),
    stream_id: text("stream_id").notNull(),
    user_id: integer("user_id").notNull(),
    product_id: integer("product_id").notNull(),
    /** Unix seconds. */
    created_at: integer("created_at").notNull().default(sql`(unixepoch())`),
  },
  (t) => [primaryKey({ columns: [t.camera_id, t.broadcast_id] }), index("camera_stream_endings_product_idx").on(t.product_id)],
);
