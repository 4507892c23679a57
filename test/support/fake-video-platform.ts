// Fake YouTube Live Streaming API (Data API v3), reached through fakeUpstream (Node side). Like
// fake-oauth-provider.ts it uses Web APIs only and imports types only (the reason is noted there):
// fakeUpstream passes in the constants of fake-upstream-config.ts and the Google token lookup.
// Nothing here logs, and no error message echoes a token or a stream key.

import type { googleAccessTokenInfo, OAuthReply, OAuthRequest } from "./fake-oauth-provider";
import type { FAKE_YOUTUBE_API, FAKE_YOUTUBE_INGEST, YOUTUBE_SCOPES, YOUTUBE_TITLE_SWITCHES } from "./fake-upstream-config";

/** The constants of the same names in fake-upstream-config.ts, and the Google fake's token lookup. */
export type VideoPlatformConfig = {
  apiUrl: typeof FAKE_YOUTUBE_API;
  ingestAddress: typeof FAKE_YOUTUBE_INGEST;
  scopes: typeof YOUTUBE_SCOPES;
  switches: typeof YOUTUBE_TITLE_SWITCHES;
  tokenInfo: typeof googleAccessTokenInfo;
};

const PRIVACY = ["public", "private", "unlisted"] as const;
/** In the order a broadcast moves through them; a transition may only go forward. */
const LIFE_CYCLE = ["created", "ready", "testing", "live", "complete"] as const;
const RESOLUTIONS = ["240p", "360p", "480p", "720p", "1080p", "1440p", "2160p", "variable"];
const FRAME_RATES = ["30fps", "60fps", "variable"];
const BROADCAST_PARTS = ["id", "snippet", "status", "contentDetails"];
const STREAM_PARTS = ["id", "snippet", "cdn", "status", "contentDetails"];

type Broadcast = {
  id: string;
  owner: string;
  title: string;
  description: string;
  scheduledStartTime: string;
  privacyStatus: (typeof PRIVACY)[number];
  lifeCycleStatus: (typeof LIFE_CYCLE)[number];
  enableAutoStart: boolean;
  enableAutoStop: boolean;
  boundStreamId: string | null;
  deleted: boolean;
};
type Stream = { id: string; owner: string; title: string; resolution: string; frameRate: string; key: string; deleted: boolean };

// Shared by every test file (one Node process); tests tell their rows apart by owner_sub.
const broadcasts = new Map<string, Broadcast>();
const streams = new Map<string, Stream>();
/** Access tokens a test declared expired: Google still knows them, this API no longer takes them. */
const expired = new Set<string>();

const json = (status: number, value: unknown): OAuthReply => ({
  status,
  headers: { "content-type": "application/json; charset=UTF-8" },
  body: JSON.stringify(value),
});
const noContent: OAuthReply = { status: 204, headers: {}, body: null };
/** Google's error envelope; `reason` is what clients branch on. */
const apiError = (code: number, message: string, reason: string) => json(code, { error: { code, message, errors: [{ message, reason }] } });
const isReply = (value: unknown): value is OAuthReply =>
  typeof value === "object" && value !== null && "status" in value && "body" in value;

function random(prefix: string): string {
  return prefix + Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Shaped like a real key (xxxx-xxxx-xxxx-xxxx-xxxx), so a client's format checks see a plausible one. */
function streamKey(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  const chars = Array.from(crypto.getRandomValues(new Uint8Array(20)), (b) => alphabet[b % alphabet.length]);
  return [0, 4, 8, 12, 16].map((i) => chars.slice(i, i + 4).join("")).join("-");
}

/** The Google sub behind the bearer token, or the 401/403 the real API gives. */
function authenticate(request: OAuthRequest, config: VideoPlatformConfig): { sub: string } | OAuthReply {
  const token = /^Bearer (\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
  const info = token ? config.tokenInfo(token) : null;
  if (!info || info.revoked || expired.has(token)) {
    const reply = apiError(401, "Invalid Credentials", "authError");
    // Clients that refresh on `invalid_token` rather than on the status find it here, as with Google.
    reply.headers["www-authenticate"] = 'Bearer realm="https://accounts.google.com/", error="invalid_token"';
    return reply;
  }
  const granted = info.scope.split(" ");
  if (!config.scopes.some((scope) => granted.includes(scope))) {
    return apiError(403, "Request had insufficient authentication scopes.", "insufficientPermissions");
  }
  return { sub: info.sub };
}

/** `part` is mandatory and decides which parts the answer carries (and which parts of a body count). */
function parseParts(url: URL, allowed: string[]): Set<string> | OAuthReply {
  const raw = url.searchParams.get("part");
  if (!raw) return apiError(400, "Required parameter: part", "required");
  const parts = raw.split(",").map((part) => part.trim());
  const unknown = parts.find((part) => !allowed.includes(part));
  return unknown === undefined ? new Set(parts) : apiError(400, `Unknown part: ${unknown}`, "unknownPart");
}

async function readBody(request: OAuthRequest): Promise<Record<string, Record<string, unknown>> | OAuthReply> {
  try {
    const body: unknown = JSON.parse(await request.text());
    if (typeof body === "object" && body !== null && !Array.isArray(body)) return body as Record<string, Record<string, unknown>>;
  } catch {
    // Falls through to the same answer as a non-object body.
  }
  return apiError(400, "Parse Error", "parseError");
}

function broadcastView(b: Broadcast, parts: Set<string>) {
  return {
    kind: "youtube#liveBroadcast",
    id: b.id,
    ...(parts.has("snippet") && { snippet: { title: b.title, description: b.description, scheduledStartTime: b.scheduledStartTime } }),
    ...(parts.has("status") && { status: { lifeCycleStatus: b.lifeCycleStatus, privacyStatus: b.privacyStatus } }),
    ...(parts.has("contentDetails") && {
      contentDetails: {
        ...(b.boundStreamId && { boundStreamId: b.boundStreamId }),
        enableAutoStart: b.enableAutoStart,
        enableAutoStop: b.enableAutoStop,
      },
    }),
  };
}

function streamView(s: Stream, parts: Set<string>, ingestAddress: string) {
  return {
    kind: "youtube#liveStream",
    id: s.id,
    ...(parts.has("snippet") && { snippet: { title: s.title } }),
    ...(parts.has("cdn") && {
      cdn: {
        ingestionType: "rtmp",
        resolution: s.resolution,
        frameRate: s.frameRate,
        ingestionInfo: { ingestionAddress: ingestAddress, streamName: s.key },
      },
    }),
    ...(parts.has("status") && { status: { streamStatus: "ready" } }),
  };
}

/** Another channel's or a deleted resource is "not found", as the real API reports it. */
function owned<T extends { owner: string; deleted: boolean }>(map: Map<string, T>, id: string | null, sub: string): T | null {
  const found = map.get(id ?? "");
  return found && found.owner === sub && !found.deleted ? found : null;
}
const broadcastNotFound = () => apiError(404, "Broadcast not found", "liveBroadcastNotFound");
const streamNotFound = () => apiError(404, "Stream not found", "liveStreamNotFound");

async function insertBroadcast(request: OAuthRequest, url: URL, sub: string, config: VideoPlatformConfig): Promise<OAuthReply> {
  const parts = parseParts(url, BROADCAST_PARTS);
  if (isReply(parts)) return parts;
  const body = await readBody(request);
  if (isReply(body)) return body;
  // Parts the `part` parameter leaves out are not written, so a client that forgets one loses it.
  const snippet = (parts.has("snippet") && body.snippet) || {};
  const status = (parts.has("status") && body.status) || {};
  const details = (parts.has("contentDetails") && body.contentDetails) || {};
  const title = typeof snippet.title === "string" ? snippet.title : "";

  if (title.includes(config.switches.down)) return apiError(503, "The service is currently unavailable.", "backendError");
  if (title.includes(config.switches.refuse)) {
    return apiError(403, "The user is not enabled for live streaming.", "liveStreamingNotEnabled");
  }
  // The broadcast is still created after the wait: a client that gave up leaves it behind, as in real life.
  if (title.includes(config.switches.slow)) await new Promise((resolve) => setTimeout(resolve, 3_000));

  const length = [...title].length;
  if (length < 1 || length > 100) return apiError(400, "The title must be 1 to 100 characters long.", "invalidTitle");
  const description = snippet.description ?? "";
  if (typeof description !== "string" || description.length > 5000) {
    return apiError(400, "The description must be text of at most 5000 characters.", "invalidDescription");
  }
  if (snippet.scheduledStartTime === undefined) return apiError(400, "scheduledStartTime is required.", "scheduledStartTimeRequired");
  const start = typeof snippet.scheduledStartTime === "string" ? Date.parse(snippet.scheduledStartTime) : NaN;
  if (Number.isNaN(start)) return apiError(400, "scheduledStartTime must be an ISO 8601 date-time.", "invalidScheduledStartTime");
  const privacyStatus = PRIVACY.find((value) => value === status.privacyStatus);
  if (!privacyStatus) return apiError(400, "privacyStatus must be public, private or unlisted.", "invalidPrivacyStatus");

  const broadcast: Broadcast = {
    id: random("bc-"),
    owner: sub,
    title,
    description,
    // The API answers in UTC without milliseconds, whatever offset the client sent.
    scheduledStartTime: new Date(start).toISOString().replace(/\.\d{3}Z$/, "Z"),
    privacyStatus,
    lifeCycleStatus: "created",
    enableAutoStart: details.enableAutoStart === true,
    enableAutoStop: details.enableAutoStop === true,
    boundStreamId: null,
    deleted: false,
  };
  broadcasts.set(broadcast.id, broadcast);
  return json(200, broadcastView(broadcast, parts));
}

async function insertStream(request: OAuthRequest, url: URL, sub: string, config: VideoPlatformConfig): Promise<OAuthReply> {
  const parts = parseParts(url, STREAM_PARTS);
  if (isReply(parts)) return parts;
  const body = await readBody(request);
  if (isReply(body)) return body;
  const snippet = (parts.has("snippet") && body.snippet) || {};
  const cdn = (parts.has("cdn") && body.cdn) || {};
  const title = typeof snippet.title === "string" ? snippet.title : "";
  if (title.length < 1 || title.length > 128) return apiError(400, "The title must be 1 to 128 characters long.", "invalidTitle");
  // Only RTMP ingestion is modelled; the real API also offers DASH, HLS and WebRTC.
  if (cdn.ingestionType !== "rtmp") return apiError(400, "cdn.ingestionType must be rtmp.", "invalidIngestionType");
  const resolution = RESOLUTIONS.find((value) => value === cdn.resolution);
  if (!resolution) return apiError(400, "cdn.resolution is missing or invalid.", "invalidResolution");
  const frameRate = FRAME_RATES.find((value) => value === cdn.frameRate);
  if (!frameRate) return apiError(400, "cdn.frameRate is missing or invalid.", "invalidFrameRate");
  const stream: Stream = { id: random("st-"), owner: sub, title, resolution, frameRate, key: streamKey(), deleted: false };
  streams.set(stream.id, stream);
  return json(200, streamView(stream, parts, config.ingestAddress));
}

/** Binding makes a created broadcast ready; leaving out streamId unbinds it, as the real API does. */
function bind(url: URL, sub: string): OAuthReply {
  const parts = parseParts(url, BROADCAST_PARTS);
  if (isReply(parts)) return parts;
  const broadcast = owned(broadcasts, url.searchParams.get("id"), sub);
  if (!broadcast) return broadcastNotFound();
  const streamId = url.searchParams.get("streamId");
  if (streamId !== null && !owned(streams, streamId, sub)) return streamNotFound();
  broadcast.boundStreamId = streamId;
  if (streamId !== null && broadcast.lifeCycleStatus === "created") broadcast.lifeCycleStatus = "ready";
  if (streamId === null && broadcast.lifeCycleStatus === "ready") broadcast.lifeCycleStatus = "created";
  return json(200, broadcastView(broadcast, parts));
}

/**
 * Permissive: any forward move is allowed (complete from created, ready, testing or live), but not
 * a step back or to the current status. testing and live need a bound stream; whether video is
 * actually arriving is not modelled.
 */
function transition(url: URL, sub: string): OAuthReply {
  const parts = parseParts(url, BROADCAST_PARTS);
  if (isReply(parts)) return parts;
  const target = (["testing", "live", "complete"] as const).find((value) => value === url.searchParams.get("broadcastStatus"));
  if (!target) return apiError(400, "broadcastStatus must be testing, live or complete.", "invalidValue");
  const broadcast = owned(broadcasts, url.searchParams.get("id"), sub);
  if (!broadcast) return broadcastNotFound();
  const from = LIFE_CYCLE.indexOf(broadcast.lifeCycleStatus);
  const to = LIFE_CYCLE.indexOf(target);
  if (to === from) return apiError(403, "The broadcast is already in the requested status.", "redundantTransition");
  if (to < from) return apiError(403, "The broadcast cannot move to the requested status.", "invalidTransition");
  if (target !== "complete" && !broadcast.boundStreamId)
    return apiError(403, "No stream is bound to the broadcast.", "errorStreamInactive");
  broadcast.lifeCycleStatus = target;
  return json(200, broadcastView(broadcast, parts));
}

function remove<T extends { owner: string; deleted: boolean }>(map: Map<string, T>, url: URL, sub: string, notFound: () => OAuthReply) {
  const found = owned(map, url.searchParams.get("id"), sub);
  if (!found) return notFound();
  found.deleted = true; // Kept, so tests can see the service cleaned up.
  return noContent;
}

/** Test hooks outside the API path: inspect, forget, or expire a token. */
async function housekeeping(request: OAuthRequest, path: string, config: VideoPlatformConfig): Promise<OAuthReply> {
  if (path === "/__state" && request.method === "GET") {
    return json(200, {
      broadcasts: [...broadcasts.values()].map(({ id, title, privacyStatus, lifeCycleStatus, boundStreamId, deleted, owner }) => {
        return { id, title, privacyStatus, lifeCycleStatus, boundStreamId, deleted, owner_sub: owner };
      }),
      // No stream keys: the state is for assertions, and keys are secrets even in a fake.
      streams: [...streams.values()].map((s) => ({ id: s.id, deleted: s.deleted, owner_sub: s.owner })),
    });
  }
  if (path === "/__reset" && request.method === "POST") {
    // Clears what other test files may be using at the same moment; meant for a lone debugging run.
    broadcasts.clear();
    streams.clear();
    expired.clear();
    return noContent;
  }
  if (path === "/__expire" && request.method === "POST") {
    let token: unknown;
    try {
      token = (JSON.parse(await request.text()) as { token?: unknown }).token;
    } catch {
      return json(400, { error: "body must be JSON {token}" });
    }
    if (typeof token !== "string" || !config.tokenInfo(token)) return json(404, { error: "Google never issued that token" });
    expired.add(token);
    return noContent;
  }
  return apiError(404, "Not Found", "notFound");
}

/** The fake's answer when the request is for its host, otherwise null. */
export async function fakeVideoPlatform(request: OAuthRequest, config: VideoPlatformConfig): Promise<OAuthReply | null> {
  const url = new URL(request.url);
  const base = new URL(config.apiUrl);
  if (url.host !== base.host) return null;
  if (!url.pathname.startsWith(base.pathname)) return housekeeping(request, url.pathname, config);

  const caller = authenticate(request, config);
  if (isReply(caller)) return caller;
  const { sub } = caller;
  switch (`${request.method} ${url.pathname.slice(base.pathname.length)}`) {
    case "POST liveBroadcasts":
      return insertBroadcast(request, url, sub, config);
    case "GET liveBroadcasts": {
      const parts = parseParts(url, BROADCAST_PARTS);
      if (isReply(parts)) return parts;
      const ids = (url.searchParams.get("id") ?? "").split(",");
      const items = ids.map((id) => owned(broadcasts, id, sub)).filter((b) => b !== null);
      return json(200, { kind: "youtube#liveBroadcastListResponse", items: items.map((b) => broadcastView(b, parts)) });
    }
    case "DELETE liveBroadcasts":
      return remove(broadcasts, url, sub, broadcastNotFound);
    case "POST liveBroadcasts/bind":
      return bind(url, sub);
    case "POST liveBroadcasts/transition":
      return transition(url, sub);
    case "POST liveStreams":
      return insertStream(request, url, sub, config);
    case "DELETE liveStreams":
      return remove(streams, url, sub, streamNotFound);
  }
  return apiError(404, "Not Found", "notFound");
}
