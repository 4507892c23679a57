import { and, eq, sql } from "drizzle-orm";
import type { Services } from "../../../container";
import { columnsOf } from "../../../db/rows";
import { oauthAccounts } from "../../../db/schema";
import { openFieldText, sealField } from "../../../lib/data-encryption";
import { OutboundError } from "../../../lib/outbound";
import { ApiError } from "../../../lib/problem";
import { tokenContext } from "../../../services/oauth/accounts";

/** What the platform calls need: the database (the link's tokens), configuration, the log and the outbound fetch. */
export type PlatformServices = Pick<Services, "db" | "config" | "log" | "outbound" | "clock">;

/** A created live stream: the broadcast viewers watch, and where the device sends its video. */
export interface CreatedStream {
  broadcastId: string;
  streamId: string;
  ingestUrl: string;
  /** A credential for the owner's channel: sealed before storage, never in a response or log. */
  streamKey: string;
}

interface Link {
  accountId: string;
  accessToken: string;
  refreshToken: string | null;
  expiresAt: number | null;
}

export function videoAccountNotLinked(): ApiError {
  return new ApiError(403, {
    code: "VIDEO_ACCOUNT_NOT_LINKED",
    detail: "Live streaming needs your YouTube account: link it with POST /v1/oauth/google-youtube/associate/authorize, then try again.",
  });
}

const unavailable = (why: string) =>
  new ApiError(503, {
    code: "VIDEO_PLATFORM_UNAVAILABLE",
    detail: `The video platform is not answering (${why}); try again shortly.`,
    headers: { "Retry-After": "30" },
  });

async function readLink(svc: PlatformServices, userId: number): Promise<Link> {
  const rows = await svc.db.all<{
    account_id: string;
    access_token_sealed: string | null;
    refresh_token_sealed: string | null;
    access_token_expires_at: number | null;
  }>(
    svc.db
      .select(columnsOf(oauthAccounts, ["account_id", "access_token_sealed", "refresh_token_sealed", "access_token_expires_at"]))
      .from(oauthAccounts)
      .where(and(eq(oauthAccounts.user_id, userId), eq(oauthAccounts.provider, "google-youtube"))),
  );
  const row = rows[0];
  if (!row || !row.access_token_sealed) throw videoAccountNotLinked();
  const context = tokenContext("google-youtube", row.account_id);
  return {
    accountId: row.account_id,
    accessToken: await openFieldText(svc.config.dataKey, row.access_token_sealed, context),
    refreshToken: row.refresh_token_sealed ? await openFieldText(svc.config.dataKey, row.refresh_token_sealed, context) : null,
    expiresAt: row.access_token_expires_at,
  };
}

/** A fresh access token from the link's refresh token, stored sealed; 403 when the grant is gone (link again). */
async function refresh(svc: PlatformServices, userId: number, link: Link): Promise<Link> {
  const google = svc.config.oauth.providers["google-youtube"];
  if (!google || !link.refreshToken) throw videoAccountNotLinked();
  let response: Response;
  try {
    response = await svc.outbound(google.tokenUrl, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: link.refreshToken,
        client_id: google.clientId,
        client_secret: google.clientSecret,
      }),
    });
  } catch (error) {
    throw unavailable((error as OutboundError).reason ?? "network");
  }
  if (response.status >= 500 || response.status === 429) throw unavailable(`token endpoint ${response.status}`);
  const body = (await response.json().catch(() => ({}))) as { access_token?: unknown; expires_in?: unknown };
  if (!response.ok || typeof body.access_token !== "string") throw videoAccountNotLinked();
  const expiresAt = typeof body.expires_in === "number" ? Math.floor(svc.clock.now() / 1000) + body.expires_in : null;
  const sealed = await sealField(svc.config.dataKey, body.access_token, tokenContext("google-youtube", link.accountId));
  await svc.db.run(
    svc.db
      .update(oauthAccounts)
      .set({ access_token_sealed: sealed, access_token_expires_at: expiresAt, updated_at: sql`unixepoch()` })
      .where(and(eq(oauthAccounts.user_id, userId), eq(oauthAccounts.provider, "google-youtube"))),
  );
  return { ...link, accessToken: body.access_token, expiresAt };
}

/** The owner's video account for one operation: every call of it shares one read of the link. */
export interface VideoAccount {
  readonly log: PlatformServices["log"];
  /**
   * One call to the platform's API, through the outbound allow-list. The access token is
   * refreshed first when it is about to expire, and once more when the platform answers 401.
   * Time-outs, 429 and 5xx are 503; other refusals 502 with the platform's message; no link 403.
   */
  call<T>(method: string, path: string, query: Record<string, string>, body?: unknown): Promise<T>;
}

/**
 * The video account of `userId`. The link (and a token refreshed on the way) is read from D1 at
 * the first call and kept for the following ones, so a start's three platform calls cost one read.
 */
export function videoAccount(svc: PlatformServices, userId: number): VideoAccount {
  let link: Link | null = null;
  const current = async (): Promise<Link> => {
    link ??= await readLink(svc, userId);
    if (link.expiresAt !== null && link.expiresAt <= Math.floor(svc.clock.now() / 1000) + 60) link = await refresh(svc, userId, link);
    return link;
  };
  return {
    log: svc.log,
    async call<T>(method: string, path: string, query: Record<string, string>, body?: unknown): Promise<T> {
      const active = await current();
      let token = active.accessToken;
      const url = `${svc.config.videoPlatform.apiUrl}${path}?${new URLSearchParams(query).toString()}`;
      for (let attempt = 0; ; attempt++) {
        let response: Response;
        try {
          response = await svc.outbound(
            url,
            {
              method,
              headers: {
                Authorization: `Bearer ${token}`,
                Accept: "application/json",
                ...(body === undefined ? {} : { "Content-Type": "application/json" }),
              },
              ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            },
            { timeoutMs: svc.config.videoPlatform.timeoutMs },
          );
        } catch (error) {
          throw unavailable(error instanceof OutboundError ? error.reason : "network");
        }
        if (response.status === 401 && attempt === 0) {
          link = await refresh(svc, userId, active);
          token = link.accessToken;
          continue;
        }
        if (response.status === 204) return undefined as T;
        if (response.status >= 500 || response.status === 429) throw unavailable(`${path} ${response.status}`);
        const json = (await response.json().catch(() => null)) as { error?: { message?: unknown } } | null;
        if (!response.ok) {
          const said = typeof json?.error?.message === "string" ? ` It said: ${json.error.message.slice(0, 200)}` : "";
          svc.log.warn("video platform refused", { path, status: response.status });
          throw new ApiError(502, {
            code: "VIDEO_PLATFORM_REFUSED",
            detail: `The video platform refused the request (${response.status}).${said}`,
          });
        }
        return json as T;
      }
    },
  };
}

type Broadcast = { id: string; status?: { lifeCycleStatus?: string } };
type Stream = { id: string; cdn?: { ingestionInfo?: { ingestionAddress?: string; streamName?: string } } };

/**
 * Creates a broadcast and an RTMP stream on the owner's channel and binds them. A failure after
 * the broadcast exists deletes what was made, so a refused start leaves nothing on the platform.
 */
export async function createLiveStream(
  account: VideoAccount,
  input: { title: string; description: string | null; privacyStatus: "public" | "private" | "unlisted" },
): Promise<CreatedStream> {
  const broadcast = await account.call<Broadcast>(
    "POST",
    "liveBroadcasts",
    { part: "snippet,status,contentDetails" },
    {
      snippet: { title: input.title, description: input.description ?? "", scheduledStartTime: new Date().toISOString() },
      status: { privacyStatus: input.privacyStatus },
      contentDetails: { enableAutoStart: true, enableAutoStop: true },
    },
  );
  let streamId: string | null = null;
  try {
    const stream = await account.call<Stream>(
      "POST",
      "liveStreams",
      { part: "snippet,cdn,contentDetails,status" },
      {
        snippet: { title: input.title },
        cdn: { ingestionType: "rtmp", resolution: "variable", frameRate: "variable" },
      },
    );
    streamId = stream.id;
    const ingestUrl = stream.cdn?.ingestionInfo?.ingestionAddress;
    const streamKey = stream.cdn?.ingestionInfo?.streamName;
    if (!ingestUrl || !streamKey)
      throw new ApiError(502, { code: "VIDEO_PLATFORM_REFUSED", detail: "The video platform gave no ingestion address." });
    await account.call("POST", "liveBroadcasts/bind", { id: broadcast.id, part: "id,contentDetails", streamId: stream.id });
    return { broadcastId: broadcast.id, streamId: stream.id, ingestUrl, streamKey };
  } catch (error) {
    await removeLiveStream(account, broadcast.id, streamId);
    throw error;
  }
}

/** Deletes a broadcast (and its stream) that never went live: best effort, logged. */
export async function removeLiveStream(account: VideoAccount, broadcastId: string, streamId: string | null): Promise<void> {
  for (const [path, id] of [
    ["liveBroadcasts", broadcastId],
    ["liveStreams", streamId],
  ] as const) {
    if (id === null) continue;
    try {
      await account.call("DELETE", path, { id });
    } catch (error) {
      account.log.warn("video platform clean-up failed", { path, error: (error as Error).message });
    }
  }
}

/**
 * Deletes an ended broadcast's ingest stream: its key would otherwise stay valid on the owner's
 * channel. The broadcast itself stays (it is the recording). Best effort, logged.
 */
export async function retireIngestStream(account: VideoAccount, streamId: string): Promise<void> {
  try {
    await account.call("DELETE", "liveStreams", { id: streamId });
  } catch (error) {
    account.log.warn("video platform stream not deleted", { error: (error as Error).message });
  }
}

/** Ends a broadcast (it becomes a recorded video); the platform refuses one that is already complete or never went live. */
export async function completeBroadcast(account: VideoAccount, broadcastId: string): Promise<void> {
  await account.call("POST", "liveBroadcasts/transition", { broadcastStatus: "complete", id: broadcastId, part: "status" });
}

/** The broadcast's life-cycle status on the platform, or null when it is gone. */
export async function broadcastStatus(account: VideoAccount, broadcastId: string): Promise<string | null> {
  const found = await account.call<{ items?: Broadcast[] }>("GET", "liveBroadcasts", { part: "id,status", id: broadcastId });
  return found.items?.[0]?.status?.lifeCycleStatus ?? null;
}

/** Where viewers watch a broadcast, and what the saved product video links to. */
export const watchUrl = (broadcastId: string) => `https://www.youtube.com/watch?v=${encodeURIComponent(broadcastId)}`;
