import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { openFieldText, parseDataKey, singleKeyRing } from "../../src/lib/data-encryption";
import type { WatchedStream } from "../../src/plugins/rpi-cam/durable-objects/camera-stream-watch";
import { bearer, verifiedUser } from "./accounts";
import { cameraApi, type DeviceAnswer, openTunnel, pairCamera, type RequestFrame, type TestCamera, type TestTunnel } from "./camera";
import { FAKE_YOUTUBE_API, type FakeProfile } from "./fake-upstream-config";
import { api } from "./http";
import { productWithComponent } from "./media";
import { fragmentOf, linkProvider, profile } from "./oauth";

/** The fake video platform's state (no keys), shared by every test file: look at your own sub or ids. */
export interface PlatformState {
  broadcasts: {
    id: string;
    title: string;
    privacyStatus: string;
    lifeCycleStatus: string;
    boundStreamId: string | null;
    deleted: boolean;
    owner_sub: string;
  }[];
  streams: { id: string; deleted: boolean; owner_sub: string }[];
}

export async function platform(): Promise<PlatformState> {
  const response = await fetch(new URL("/__state", FAKE_YOUTUBE_API));
  expect(response.status).toBe(200);
  return (await response.json()) as PlatformState;
}

/** One broadcast on the fake platform, by id. */
export const broadcast = async (id: string) => (await platform()).broadcasts.find((b) => b.id === id);

/** A device that streams when asked: POST starts, GET reports, DELETE stops. */
export const streamingDevice = (request: RequestFrame): DeviceAnswer =>
  request.method === "POST"
    ? { status: 201, data: { streaming: true } }
    : request.method === "GET"
      ? { status: 200, data: { streaming: true, fps: 30 } }
      : { status: 204 };

/** The camera's relay object. */
export const relayOf = (camera: TestCamera) => env.CAMERA_RELAY.get(env.CAMERA_RELAY.idFromName(camera.id));

/** The object's `stream` marker (undefined when it watches no stream). */
export const watchMarker = (camera: TestCamera) =>
  runInDurableObject(relayOf(camera), (_instance, state) => state.storage.get<WatchedStream>("stream"));

/** `sub`'s broadcasts on the platform, deleted or not. */
export const broadcastsOf = async (sub: string) => (await platform()).broadcasts.filter((b) => b.owner_sub === sub);
/** The platform's broadcasts with this title (titles made with `unique` are one test's own). */
export const broadcastsTitled = async (title: string) => (await platform()).broadcasts.filter((b) => b.title === title);
/** What is running on the platform for `sub`: broadcasts and streams not deleted. */
export async function runningFor(sub: string) {
  const state = await platform();
  const mine = <T extends { owner_sub: string; deleted: boolean }>(items: T[]) =>
    items.filter((item) => item.owner_sub === sub && !item.deleted);
  return { broadcasts: mine(state.broadcasts), streams: mine(state.streams) };
}

/** The fake's key format: five groups of four lower-case letters and digits. */
export const STREAM_KEY = /^[a-z0-9]{4}(-[a-z0-9]{4}){4}$/;
/** `label` with a random suffix, so a title is one test's own on the shared platform. */
export const unique = (label: string) => `${label} ${crypto.randomUUID().slice(0, 8)}`;

export interface Streamer {
  token: string;
  password: string;
  userId: number;
  who: FakeProfile;
  camera: TestCamera;
  tunnel: TestTunnel | null;
  product: number;
  component: number;
}

/** Without a linked video account, with the camera offline, or with the device answering `answer`. */
export interface StreamerOptions {
  linked?: boolean;
  online?: boolean;
  answer?: (request: RequestFrame) => DeviceAnswer | null;
}

/**
 * A verified owner (a new user named from `prefix`, lower-case letters and digits) with, unless
 * told otherwise, a linked video account, a camera online on the tunnel, and a product.
 */
export async function streamer(prefix: string, options: StreamerOptions = {}): Promise<Streamer> {
  const user = await verifiedUser(prefix);
  const token = user.tokens.access_token;
  const who = profile();
  if (options.linked !== false) {
    expect(fragmentOf(await linkProvider("google-youtube", bearer(token), { current_password: user.password }, who))).toEqual({
      status: "success",
    });
  }
  const camera = await pairCamera(token);
  const tunnel = options.online === false ? null : await openTunnel(camera, options.answer ?? streamingDevice);
  const { product, component } = await productWithComponent(token);
  return { token, password: user.password, userId: user.id, who, camera, tunnel, product, component };
}

/** The camera's stream, under /v1/plugins/rpi-cam/cameras (the prefix `cameraApi` adds). */
export const streamPath = (s: Streamer) => `/${s.camera.id}/recording-stream`;
export const start = (s: Streamer, body: Record<string, unknown> = {}) =>
  cameraApi(s.token, streamPath(s), { method: "POST", body: { product_id: s.product, ...body } });
export const stop = (s: Streamer) => cameraApi(s.token, streamPath(s), { method: "DELETE" });
/** The `/streams/youtube` commands the device received. */
export const streamCommands = (s: Streamer) =>
  (s.tunnel?.frames ?? []).filter((f) => f.type === "request" && f.path === "/streams/youtube") as unknown as RequestFrame[];

export interface StreamDbRow {
  broadcast_id: string;
  stream_id: string;
  stream_key_sealed: string;
  user_id: number;
  product_id: number;
}
/** The camera's D1 camera_streams row, or null. */
export const streamRow = (cameraId: string) =>
  env.DB.prepare("SELECT * FROM camera_streams WHERE camera_id = ?").bind(cameraId).first<StreamDbRow>();

/** The link's current access token and its stored expiry, opened as the service opens them. */
export async function videoLink(userId: number): Promise<{ accessToken: string; expiresAt: number | null }> {
  const row = await env.DB.prepare(
    "SELECT account_id, access_token_sealed, access_token_expires_at FROM oauth_accounts WHERE user_id = ? AND provider = 'google-youtube'",
  )
    .bind(userId)
    .first<{ account_id: string; access_token_sealed: string; access_token_expires_at: number | null }>();
  const accessToken = await openFieldText(
    singleKeyRing(parseDataKey(env.DATA_ENCRYPTION_KEY)),
    row!.access_token_sealed,
    `oauth:google-youtube:${row!.account_id}`,
  );
  return { accessToken, expiresAt: row!.access_token_expires_at };
}

/**
 * A call to the fake video platform as the owner's channel (with the link's access token), as the
 * platform itself or the owner in the platform's own tools would act: `path` under the API, e.g.
 * `liveBroadcasts/transition?broadcastStatus=complete&id=...&part=status`.
 */
export async function asChannel(userId: number, method: string, path: string): Promise<Response> {
  const { accessToken } = await videoLink(userId);
  return fetch(new URL(path, FAKE_YOUTUBE_API), { method, headers: { Authorization: `Bearer ${accessToken}` } });
}

/** Ends a broadcast on the platform, as its auto-stop does when the video stops arriving. */
export async function completeOnPlatform(userId: number, broadcastId: string): Promise<void> {
  const response = await asChannel(
    userId,
    "POST",
    `liveBroadcasts/transition?broadcastStatus=complete&id=${encodeURIComponent(broadcastId)}&part=status`,
  );
  expect(response.status, await response.clone().text()).toBe(200);
}

/** The product's videos, as anyone reads them. */
export const videosOf = async (product: number) =>
  (await (await api(`/v1/products/${product}/videos`)).json()) as { id: number; url: string; video_metadata: Record<string, unknown> }[];
