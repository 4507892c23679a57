import { describe, expect, it } from "vitest";
import {
  encodeProfile,
  FAKE_GOOGLE,
  FAKE_YOUTUBE_API,
  FAKE_YOUTUBE_INGEST,
  type FakeProfile,
  YOUTUBE_SCOPES,
  YOUTUBE_TITLE_SWITCHES,
} from "../support/fake-upstream-config";

// Checks the fake YouTube Live Streaming API, with tokens obtained from the fake Google exactly as
// the service will obtain them, so the live-streaming tests can trust both fakes together.

const REDIRECT = "https://api.relab.test/auth/oauth/callback";
const ORIGIN = new URL(FAKE_YOUTUBE_API).origin;
const form = (body: Record<string, string>) =>
  fetch(FAKE_GOOGLE.tokenUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body),
  });

type Tokens = { access_token: string; refresh_token: string };

/** Authorize with access_type=offline, then redeem the code: an access and a refresh token for a new user. */
async function googleTokens(scope = `openid email ${YOUTUBE_SCOPES[0]}`): Promise<Tokens & { sub: string }> {
  const who: FakeProfile = { sub: `sub-${crypto.randomUUID()}`, email: "streamer@example.test", email_verified: true };
  const verifier = `verifier-${crypto.randomUUID()}-${crypto.randomUUID()}`;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  const challenge = btoa(String.fromCharCode(...digest))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
  const url = new URL(FAKE_GOOGLE.authorizeUrl);
  const params = {
    client_id: FAKE_GOOGLE.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope,
    access_type: "offline",
    prompt: "consent",
    code_challenge: challenge,
    code_challenge_method: "S256",
    login_hint: encodeProfile(who),
  };
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  const back = new URL((await fetch(url, { redirect: "manual" })).headers.get("location")!);
  const response = await form({
    grant_type: "authorization_code",
    code: back.searchParams.get("code")!,
    redirect_uri: REDIRECT,
    client_id: FAKE_GOOGLE.clientId,
    client_secret: FAKE_GOOGLE.clientSecret,
    code_verifier: verifier,
  });
  expect(response.status).toBe(200);
  return { ...((await response.json()) as Tokens), sub: who.sub };
}

/** One API call; `path` is relative to FAKE_YOUTUBE_API, as a client built on YOUTUBE_API_URL would make it. */
function yt(token: string, method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  return fetch(new URL(path, FAKE_YOUTUBE_API), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

const broadcastBody = (title: string, extra: Record<string, unknown> = {}) => ({
  snippet: { title, scheduledStartTime: "2030-05-01T10:00:00+02:00" },
  status: { privacyStatus: "unlisted" },
  contentDetails: { enableAutoStart: true, enableAutoStop: true },
  ...extra,
});
const insertBroadcast = (token: string, title: string, extra: Record<string, unknown> = {}) =>
  yt(token, "POST", "liveBroadcasts?part=snippet,status,contentDetails", broadcastBody(title, extra));

type State = {
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
};
const state = async () => (await (await fetch(`${ORIGIN}/__state`)).json()) as State;
const reasonOf = async (response: Response) =>
  ((await response.json()) as { error: { errors: { reason: string }[] } }).error.errors[0]!.reason;

describe("fake YouTube Live Streaming API", () => {
  it("runs insert broadcast, insert stream, bind, list, transition to complete and delete", async () => {
    const { access_token: token, sub } = await googleTokens();

    const inserted = await insertBroadcast(token, "Teardown: a 2009 laptop");
    expect(inserted.status).toBe(200);
    const broadcast = (await inserted.json()) as { id: string };
    expect(broadcast).toEqual({
      kind: "youtube#liveBroadcast",
      id: expect.stringMatching(/^bc-/),
      snippet: { title: "Teardown: a 2009 laptop", description: "", scheduledStartTime: "2030-05-01T08:00:00Z" },
      status: { lifeCycleStatus: "created", privacyStatus: "unlisted" },
      contentDetails: { enableAutoStart: true, enableAutoStop: true },
    });

    const streamResponse = await yt(token, "POST", "liveStreams?part=snippet,cdn,contentDetails,status", {
      snippet: { title: "Bench camera" },
      cdn: { ingestionType: "rtmp", resolution: "variable", frameRate: "variable" },
    });
    expect(streamResponse.status).toBe(200);
    const stream = (await streamResponse.json()) as { id: string; cdn: { ingestionInfo: { streamName: string } } };
    expect(stream).toMatchObject({
      kind: "youtube#liveStream",
      id: expect.stringMatching(/^st-/),
      cdn: {
        ingestionType: "rtmp",
        ingestionInfo: { ingestionAddress: FAKE_YOUTUBE_INGEST, streamName: expect.stringMatching(/^([a-z0-9]{4}-){4}[a-z0-9]{4}$/) },
      },
      status: { streamStatus: "ready" },
    });

    // An unbound broadcast cannot go to testing.
    const early = await yt(token, "POST", `liveBroadcasts/transition?broadcastStatus=testing&id=${broadcast.id}&part=status`);
    expect(early.status).toBe(403);
    expect(await reasonOf(early)).toBe("errorStreamInactive");

    const bound = await yt(token, "POST", `liveBroadcasts/bind?id=${broadcast.id}&part=id,contentDetails&streamId=${stream.id}`);
    expect(await bound.json()).toEqual({
      kind: "youtube#liveBroadcast",
      id: broadcast.id,
      contentDetails: { boundStreamId: stream.id, enableAutoStart: true, enableAutoStop: true },
    });

    const listed = await yt(token, "GET", `liveBroadcasts?part=id,snippet,status&id=${broadcast.id}`);
    expect(await listed.json()).toMatchObject({ items: [{ id: broadcast.id, status: { lifeCycleStatus: "ready" } }] });

    const done = await yt(token, "POST", `liveBroadcasts/transition?broadcastStatus=complete&id=${broadcast.id}&part=status`);
    expect(await done.json()).toEqual({
      kind: "youtube#liveBroadcast",
      id: broadcast.id,
      status: { lifeCycleStatus: "complete", privacyStatus: "unlisted" },
    });
    const again = await yt(token, "POST", `liveBroadcasts/transition?broadcastStatus=complete&id=${broadcast.id}&part=status`);
    expect(await reasonOf(again)).toBe("redundantTransition");

    expect((await state()).broadcasts.find((b) => b.id === broadcast.id)).toEqual({
      id: broadcast.id,
      title: "Teardown: a 2009 laptop",
      privacyStatus: "unlisted",
      lifeCycleStatus: "complete",
      boundStreamId: stream.id,
      deleted: false,
      owner_sub: sub,
    });
    // The state never shows a stream key.
    expect(JSON.stringify(await state())).not.toContain(stream.cdn.ingestionInfo.streamName);

    expect((await yt(token, "DELETE", `liveBroadcasts?id=${broadcast.id}`)).status).toBe(204);
    expect((await yt(token, "DELETE", `liveBroadcasts?id=${broadcast.id}`)).status).toBe(404);
    expect((await yt(token, "DELETE", `liveStreams?id=${stream.id}`)).status).toBe(204);
    expect(await (await yt(token, "GET", `liveBroadcasts?part=id&id=${broadcast.id}`)).json()).toMatchObject({ items: [] });
    const after = await state();
    expect(after.broadcasts.find((b) => b.id === broadcast.id)?.deleted).toBe(true);
    expect(after.streams.filter((s) => s.owner_sub === sub)).toEqual([{ id: stream.id, deleted: true, owner_sub: sub }]);
  });

  it("answers 401 Invalid Credentials to an unknown, missing or revoked token", async () => {
    for (const headers of [{ authorization: "Bearer goog-at-never-issued" }, {} as Record<string, string>]) {
      const response = await fetch(new URL("liveBroadcasts?part=id&id=bc-x", FAKE_YOUTUBE_API), { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect(await response.json()).toMatchObject({ error: { code: 401, message: "Invalid Credentials" } });
    }
    const { access_token } = await googleTokens();
    const revoke = await fetch(FAKE_GOOGLE.revokeUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: access_token }),
    });
    expect(revoke.status).toBe(200);
    expect((await insertBroadcast(access_token, "After revocation")).status).toBe(401);
  });

  it("refuses an expired token until the client refreshes it at Google", async () => {
    const { access_token, refresh_token, sub } = await googleTokens();
    expect((await fetch(`${ORIGIN}/__expire`, { method: "POST", body: JSON.stringify({ token: access_token }) })).status).toBe(204);
    expect((await insertBroadcast(access_token, "Expired")).status).toBe(401);

    const refreshed = await form({
      grant_type: "refresh_token",
      refresh_token,
      client_id: FAKE_GOOGLE.clientId,
      client_secret: FAKE_GOOGLE.clientSecret,
    });
    const { access_token: fresh } = (await refreshed.json()) as { access_token: string };
    const retried = await insertBroadcast(fresh, "After refresh");
    expect(retried.status).toBe(200);
    const { id } = (await retried.json()) as { id: string };
    expect((await state()).broadcasts.find((b) => b.id === id)?.owner_sub).toBe(sub);
    expect((await fetch(`${ORIGIN}/__expire`, { method: "POST", body: JSON.stringify({ token: "goog-at-unknown" }) })).status).toBe(404);
  });

  it("plays the title switches: [refuse] 403, [down] 503, [slow] late but created", async () => {
    const { access_token: token, sub } = await googleTokens();
    const refused = await insertBroadcast(token, `Lecture ${YOUTUBE_TITLE_SWITCHES.refuse}`);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      error: {
        code: 403,
        message: "The user is not enabled for live streaming.",
        errors: [{ message: "The user is not enabled for live streaming.", reason: "liveStreamingNotEnabled" }],
      },
    });
    const down = await insertBroadcast(token, `Lecture ${YOUTUBE_TITLE_SWITCHES.down}`);
    expect(down.status).toBe(503);
    expect(await reasonOf(down)).toBe("backendError");
    expect((await state()).broadcasts.filter((b) => b.owner_sub === sub)).toEqual([]);

    const started = Date.now();
    const slow = await insertBroadcast(token, `Lecture ${YOUTUBE_TITLE_SWITCHES.slow}`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900);
    expect(slow.status).toBe(200);
  });

  it("validates title, privacy, start time and part, and wants the YouTube scope", async () => {
    const { access_token: token } = await googleTokens();
    for (const title of ["", "x".repeat(101)]) {
      const response = await insertBroadcast(token, title);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: 400, errors: [{ reason: "invalidTitle" }] } });
    }
    expect((await insertBroadcast(token, "x".repeat(100))).status).toBe(200);
    expect(await reasonOf(await insertBroadcast(token, "Ok", { status: { privacyStatus: "friends" } }))).toBe("invalidPrivacyStatus");
    expect(await reasonOf(await insertBroadcast(token, "Ok", { snippet: { title: "Ok" } }))).toBe("scheduledStartTimeRequired");
    // Without `status` in part, the privacy status in the body is not read.
    const noStatusPart = await yt(token, "POST", "liveBroadcasts?part=snippet", broadcastBody("Ok"));
    expect(await reasonOf(noStatusPart)).toBe("invalidPrivacyStatus");
    expect(await reasonOf(await yt(token, "POST", "liveBroadcasts", broadcastBody("Ok")))).toBe("required");

    const signInOnly = await googleTokens("openid email profile");
    const forbidden = await insertBroadcast(signInOnly.access_token, "No scope");
    expect(forbidden.status).toBe(403);
    expect(await reasonOf(forbidden)).toBe("insufficientPermissions");
  });

  it("hides one user's broadcasts and streams from another", async () => {
    const owner = await googleTokens();
    const other = await googleTokens();
    const { id } = (await (await insertBroadcast(owner.access_token, "Mine")).json()) as { id: string };
    expect(await (await yt(other.access_token, "GET", `liveBroadcasts?part=id&id=${id}`)).json()).toMatchObject({ items: [] });
    expect((await yt(other.access_token, "DELETE", `liveBroadcasts?id=${id}`)).status).toBe(404);
    const bind = await yt(other.access_token, "POST", `liveBroadcasts/bind?id=${id}&part=id`);
    expect(await reasonOf(bind)).toBe("liveBroadcastNotFound");
  });
});
