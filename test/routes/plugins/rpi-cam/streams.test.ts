import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { openFieldText, parseDataKey } from "../../../../src/lib/data-encryption";
import { bearer, verifiedUser } from "../../../support/accounts";
import { cameraApi, type DeviceAnswer, openTunnel, pairCamera, type RequestFrame, type TestCamera, type TestTunnel } from "../../../support/camera";
import { FAKE_YOUTUBE_API, FAKE_YOUTUBE_INGEST, type FakeProfile } from "../../../support/fake-upstream-config";
import { api, apiWithVars, expectProblem } from "../../../support/http";
import { captureLogs } from "../../../support/logs";
import { productWithComponent } from "../../../support/media";
import { broadcast, platform, streamingDevice, watchMarker } from "../../../support/streams";
import { fragmentOf, linkProvider, profile } from "../../../support/oauth";

// Live streams to the video platform (issue 12): start -> state -> stop, saved as a product video,
// against the fake YouTube API (test/support/fake-video-platform.ts) and a test device on the
// tunnel. Every refusal (no linked account, another's camera or product, the device offline or
// refusing, the platform refusing or too slow, a second start) leaves nothing running on the
// platform, in D1 or on the device; the stream key reaches the device and no one else; an expired
// provider token is refreshed. The fake's state is shared by every test file: tests look at their
// own Google sub's broadcasts, or at one broadcast by id or title.
// The stream's end without its device, and its record's removal, are in streams-cleanup.test.ts.

const broadcastsOf = async (sub: string) => (await platform()).broadcasts.filter((b) => b.owner_sub === sub);
const broadcastsTitled = async (title: string) => (await platform()).broadcasts.filter((b) => b.title === title);
/** What is running on the platform for `sub`: broadcasts and streams not deleted. */
async function runningFor(sub: string) {
  const state = await platform();
  const mine = <T extends { owner_sub: string; deleted: boolean }>(items: T[]) => items.filter((item) => item.owner_sub === sub && !item.deleted);
  return { broadcasts: mine(state.broadcasts), streams: mine(state.streams) };
}

/** The fake's key format: five groups of four lower-case letters and digits. */
const STREAM_KEY = /^[a-z0-9]{4}(-[a-z0-9]{4}){4}$/;
const unique = (label: string) => `${label} ${crypto.randomUUID().slice(0, 8)}`;

interface Streamer {
  token: string;
  userId: number;
  who: FakeProfile;
  camera: TestCamera;
  tunnel: TestTunnel | null;
  product: number;
  component: number;
}

/** A verified owner with (unless told otherwise) a linked video account, a camera online on the tunnel, and a product. */
async function streamer(options: { linked?: boolean; online?: boolean; answer?: (request: RequestFrame) => DeviceAnswer | null } = {}): Promise<Streamer> {
  const user = await verifiedUser("streamer");
  const token = user.tokens.access_token;
  const who = profile();
  if (options.linked !== false) {
    expect(fragmentOf(await linkProvider("google-youtube", bearer(token), { current_password: user.password }, who))).toEqual({ status: "success" });
  }
  const camera = await pairCamera(token);
  const tunnel = options.online === false ? null : await openTunnel(camera, options.answer ?? streamingDevice);
  const { product, component } = await productWithComponent(token);
  return { token, userId: user.id, who, camera, tunnel, product, component };
}

const streamPath = (s: Streamer) => `/${s.camera.id}/recording-stream`;
const start = (s: Streamer, body: Record<string, unknown> = {}) => cameraApi(s.token, streamPath(s), { method: "POST", body: { product_id: s.product, ...body } });
const stop = (s: Streamer) => cameraApi(s.token, streamPath(s), { method: "DELETE" });
/** The `/streams/youtube` commands the device received. */
const streamCommands = (s: Streamer) => (s.tunnel?.frames ?? []).filter((f) => f.type === "request" && f.path === "/streams/youtube") as unknown as RequestFrame[];

interface StreamDbRow {
  broadcast_id: string;
  stream_id: string;
  stream_key_sealed: string;
  user_id: number;
  product_id: number;
}
const streamRow = (cameraId: string) => env.DB.prepare("SELECT * FROM camera_streams WHERE camera_id = ?").bind(cameraId).first<StreamDbRow>();

/** The link's current access token and its stored expiry, opened as the service opens them. */
async function videoLink(userId: number): Promise<{ accessToken: string; expiresAt: number | null }> {
  const row = await env.DB.prepare("SELECT account_id, access_token_sealed, access_token_expires_at FROM oauth_accounts WHERE user_id = ? AND provider = 'google-youtube'")
    .bind(userId)
    .first<{ account_id: string; access_token_sealed: string; access_token_expires_at: number | null }>();
  const accessToken = await openFieldText(parseDataKey(env.DATA_ENCRYPTION_KEY), row!.access_token_sealed, `oauth:google-youtube:${row!.account_id}`);
  return { accessToken, expiresAt: row!.access_token_expires_at };
}

describe("a live stream", () => {
  it("starts, reports its state and stops as a product video; the key reaches the device only", async () => {
    const s = await streamer();
    const title = unique("Kettle teardown");
    const description = "Lid off, heating element next";
    // Everything the API shows anyone: bodies and headers of each response, and every log line.
    const shown: string[] = [];
    const show = async (response: Response) => {
      shown.push(await response.clone().text(), JSON.stringify([...response.headers]));
      return response;
    };
    const logs = captureLogs();
    try {
      const started = await show(await start(s, { title, description }));
      expect(started.status, await started.clone().text()).toBe(201);
      expect(started.headers.get("location")).toBe(`/v1/plugins/rpi-cam/cameras/${s.camera.id}/recording-stream`);
      const stream = (await started.json()) as { broadcast_id: string };
      expect(stream).toEqual({
        camera_id: s.camera.id,
        product_id: s.product,
        broadcast_id: expect.stringMatching(/^bc-/),
        title,
        description,
        privacy_status: "private",
        watch_url: `https://www.youtube.com/watch?v=${stream.broadcast_id}`,
        started_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      });

      // The device got the ingest address and the key; the platform has the bound broadcast.
      const [command] = streamCommands(s);
      expect(command).toMatchObject({ method: "POST", body: { ingest_url: FAKE_YOUTUBE_INGEST, broadcast_id: stream.broadcast_id } });
      const key = (command!.body as { stream_key: string }).stream_key;
      expect(key).toMatch(STREAM_KEY);
      expect(await broadcast(stream.broadcast_id)).toMatchObject({ title, privacyStatus: "private", lifeCycleStatus: "ready", boundStreamId: expect.stringMatching(/^st-/), deleted: false, owner_sub: s.who.sub });

      // D1 holds the key sealed (bound to the camera), never in clear.
      const row = (await streamRow(s.camera.id))!;
      expect(row).toMatchObject({ broadcast_id: stream.broadcast_id, user_id: s.userId, product_id: s.product });
      expect(row.stream_key_sealed).not.toContain(key);
      expect(await openFieldText(parseDataKey(env.DATA_ENCRYPTION_KEY), row.stream_key_sealed, `stream-key:${s.camera.id}`)).toBe(key);
      expect(await watchMarker(s.camera)).toEqual({ cameraId: s.camera.id, offlineSince: null });

      const read = await show(await cameraApi(s.token, streamPath(s)));
      expect(read.status).toBe(200);
      expect(read.headers.get("cache-control")).toBe("no-store");
      expect(await read.json()).toEqual({ ...stream, platform_status: "ready", device: { streaming: true, fps: 30 } });

      const stopped = await show(await stop(s));
      expect(stopped.status, await stopped.clone().text()).toBe(200);
      const video = (await stopped.json()) as { id: number };
      expect(video).toEqual({
        id: expect.any(Number),
        url: `https://www.youtube.com/watch?v=${stream.broadcast_id}`,
        title,
        description,
        video_metadata: {
          platform: "youtube",
          broadcast_id: stream.broadcast_id,
          privacy_status: "private",
          camera_id: s.camera.id,
          started_at: expect.any(Number),
          ended_at: expect.any(Number),
          ended_by: "owner",
        },
        created_at: expect.any(String),
      });
      expect(streamCommands(s).map((c) => c.method)).toEqual(["POST", "GET", "DELETE"]);
      expect(await broadcast(stream.broadcast_id)).toMatchObject({ lifeCycleStatus: "complete", deleted: false });
      // The ingest stream is deleted, so its key is dead; the broadcast stays as the recording.
      expect(await runningFor(s.who.sub)).toEqual({ broadcasts: [expect.objectContaining({ id: stream.broadcast_id })], streams: [] });
      const videos = await show(await api(`/v1/products/${s.product}/videos`));
      expect(await videos.json()).toEqual([video]);

      // Nothing of the stream is left: no row, no watch, no stream to read or stop.
      expect(await streamRow(s.camera.id)).toBeNull();
      expect(await watchMarker(s.camera)).toBeUndefined();
      await expectProblem(await show(await cameraApi(s.token, streamPath(s))), 404, "RECORDING_STREAM_NOT_FOUND");
      await expectProblem(await show(await stop(s)), 404, "RECORDING_STREAM_NOT_FOUND");

      expect(logs.entries().map((entry) => entry.msg)).toEqual(expect.arrayContaining(["camera stream started", "camera stream ended"]));
      expect(shown.filter((text) => text.includes(key))).toEqual([]);
      expect(logs.lines.filter((line) => line.includes(key))).toEqual([]);
    } finally {
      logs.restore();
      s.tunnel!.socket.close();
    }
  });

  it("names the default title and passes the privacy status on", async () => {
    const s = await streamer();
    const started = await start(s, { privacy_status: "unlisted" });
    expect(started.status, await started.clone().text()).toBe(201);
    const stream = (await started.json()) as { broadcast_id: string; title: string; description: string | null; privacy_status: string };
    expect(stream).toMatchObject({ title: expect.stringMatching(/^Teardown stream \d{4}-/), description: null, privacy_status: "unlisted" });
    expect(await broadcast(stream.broadcast_id)).toMatchObject({ title: stream.title, privacyStatus: "unlisted" });
    expect((await stop(s)).status).toBe(200);
    s.tunnel!.socket.close();
  });
});

describe("starting a stream is refused", () => {
  it("without a linked video account: 403 saying to link one, nothing sent to the device", async () => {
    const s = await streamer({ linked: false });
    const title = unique("Unlinked");
    const problem = await expectProblem(await start(s, { title }), 403, "VIDEO_ACCOUNT_NOT_LINKED");
    expect(problem.detail).toContain("POST /v1/oauth/google-youtube/associate/authorize");
    expect(streamCommands(s)).toEqual([]);
    expect(await broadcastsTitled(title)).toEqual([]);
    expect(await streamRow(s.camera.id)).toBeNull();
    s.tunnel!.socket.close();
  });

  it("for another's camera, another's product or a component: 404, and another's stream cannot be read or stopped", async () => {
    const alice = await streamer();
    const bob = await streamer();
    const title = unique("Not yours");
    await expectProblem(await cameraApi(bob.token, streamPath(alice), { method: "POST", body: { product_id: bob.product, title } }), 404, "CAMERA_NOT_FOUND");
    await expectProblem(await start(alice, { product_id: bob.product, title }), 404, "PRODUCT_NOT_FOUND");
    await expectProblem(await start(alice, { product_id: alice.component, title }), 404, "PRODUCT_NOT_FOUND");
    expect(await broadcastsTitled(title)).toEqual([]);
    expect(await broadcastsOf(alice.who.sub)).toEqual([]);
    expect(streamCommands(alice)).toEqual([]);

    expect((await start(alice)).status).toBe(201);
    await expectProblem(await cameraApi(bob.token, streamPath(alice)), 404, "CAMERA_NOT_FOUND");
    await expectProblem(await cameraApi(bob.token, streamPath(alice), { method: "DELETE" }), 404, "CAMERA_NOT_FOUND");
    expect(await streamRow(alice.camera.id)).not.toBeNull();
    expect((await stop(alice)).status).toBe(200);
    alice.tunnel!.socket.close();
    bob.tunnel!.socket.close();
  });

  it("when the camera is offline: 503, and nothing created on the platform", async () => {
    const s = await streamer({ online: false });
    const before = await runningFor(s.who.sub);
    const response = await start(s, { title: unique("Offline") });
    expect(response.headers.get("retry-after")).toBe("30");
    await expectProblem(response, 503, "CAMERA_OFFLINE");
    expect(await broadcastsOf(s.who.sub)).toHaveLength(before.broadcasts.length);
    expect((await platform()).streams.filter((st) => st.owner_sub === s.who.sub)).toHaveLength(before.streams.length);
    expect(await streamRow(s.camera.id)).toBeNull();
  });

  it("when the device refuses to start: 502, the broadcast and stream deleted on the platform, no record", async () => {
    const s = await streamer({ answer: (request) => (request.method === "POST" ? { status: 500, data: { detail: "encoder busy" } } : { status: 200, data: {} }) });
    const problem = await expectProblem(await start(s, { title: unique("Device refuses") }), 502, "CAMERA_COMMAND_FAILED");
    expect(problem.detail).toContain("500");
    const [command] = streamCommands(s);
    const broadcastId = (command!.body as { broadcast_id: string }).broadcast_id;
    expect(await broadcast(broadcastId)).toMatchObject({ deleted: true });
    expect(await runningFor(s.who.sub)).toEqual({ broadcasts: [], streams: [] });
    expect(await streamRow(s.camera.id)).toBeNull();
    expect(await watchMarker(s.camera)).toBeUndefined();
    await expectProblem(await cameraApi(s.token, streamPath(s)), 404, "RECORDING_STREAM_NOT_FOUND");
    s.tunnel!.socket.close();
  });

  it("when the platform refuses (502) or is down (503): nothing created, nothing sent to the device", async () => {
    const s = await streamer();
    const refused = unique("Kettle [refuse]");
    const problem = await expectProblem(await start(s, { title: refused }), 502, "VIDEO_PLATFORM_REFUSED");
    expect(problem.detail).toContain("403");
    const down = unique("Kettle [down]");
    const response = await start(s, { title: down });
    expect(response.headers.get("retry-after")).toBe("30");
    await expectProblem(response, 503, "VIDEO_PLATFORM_UNAVAILABLE");
    expect([...(await broadcastsTitled(refused)), ...(await broadcastsTitled(down))]).toEqual([]);
    expect(await runningFor(s.who.sub)).toEqual({ broadcasts: [], streams: [] });
    expect(streamCommands(s)).toEqual([]);
    expect(await streamRow(s.camera.id)).toBeNull();
    s.tunnel!.socket.close();
  });

  it("when the platform does not answer in time: 503, and nothing left streaming", { timeout: 15_000 }, async () => {
    const s = await streamer();
    const title = unique("Kettle [slow]");
    const began = Date.now();
    const response = await apiWithVars({ VIDEO_PLATFORM_TIMEOUT_MS: "1000" }, `/v1/plugins/rpi-cam/cameras${streamPath(s)}`, {
      method: "POST",
      headers: { ...bearer(s.token), "content-type": "application/json" },
      body: JSON.stringify({ product_id: s.product, title }),
    });
    await expectProblem(response, 503, "VIDEO_PLATFORM_UNAVAILABLE");
    expect(Date.now() - began).toBeLessThan(2_500);
    expect(streamCommands(s)).toEqual([]);
    expect(await streamRow(s.camera.id)).toBeNull();
    // The fake still creates the broadcast once its 3 s are up (the API never learns its id):
    // it stays unbound, without a stream, so nothing can go live on it.
    await expect.poll(() => broadcastsTitled(title), { timeout: 6_000, interval: 250 }).toHaveLength(1);
    expect((await broadcastsTitled(title))[0]).toMatchObject({ lifeCycleStatus: "created", boundStreamId: null });
    expect((await runningFor(s.who.sub)).streams).toEqual([]);
    s.tunnel!.socket.close();
  });
});

describe("the product's five videos", () => {
  const addVideos = async (s: Streamer, count: number) => {
    for (let i = 0; i < count; i++) {
      const added = await api(`/v1/products/${s.product}/videos`, {
        method: "POST",
        headers: { ...bearer(s.token), "content-type": "application/json" },
        body: JSON.stringify({ url: `https://video.example/watch?v=${i}` }),
      });
      expect(added.status, await added.clone().text()).toBe(201);
    }
  };

  it("refuse a start with 409 before anything is created", async () => {
    const s = await streamer();
    await addVideos(s, 5);
    await expectProblem(await start(s, { title: unique("Full") }), 409, "VIDEO_LIMIT_REACHED");
    expect(await broadcastsOf(s.who.sub)).toEqual([]);
    expect(streamCommands(s)).toEqual([]);
    s.tunnel!.socket.close();
  });

  it("filled during the stream: it still ends, and the 409 names the broadcast's URL", async () => {
    const s = await streamer();
    const started = await start(s, { title: unique("Fills up") });
    expect(started.status).toBe(201);
    const { broadcast_id } = (await started.json()) as { broadcast_id: string };
    await addVideos(s, 5);
    const problem = await expectProblem(await stop(s), 409, "VIDEO_LIMIT_REACHED");
    expect(problem.detail).toContain(`https://www.youtube.com/watch?v=${broadcast_id}`);
    expect(await broadcast(broadcast_id)).toMatchObject({ lifeCycleStatus: "complete" });
    expect(await streamRow(s.camera.id)).toBeNull();
    expect(await watchMarker(s.camera)).toBeUndefined();
    s.tunnel!.socket.close();
  });
});

describe("one stream per camera", () => {
  it("refuses a second start with 409 while one runs", async () => {
    const s = await streamer();
    const first = await start(s, { title: unique("First") });
    expect(first.status).toBe(201);
    const { broadcast_id } = (await first.json()) as { broadcast_id: string };
    const second = unique("Second");
    await expectProblem(await start(s, { title: second }), 409, "STREAM_ALREADY_RUNNING");
    expect(await broadcastsTitled(second)).toEqual([]);
    expect((await runningFor(s.who.sub)).broadcasts.map((b) => b.id)).toEqual([broadcast_id]);
    expect(streamCommands(s).filter((c) => c.method === "POST")).toHaveLength(1);
    expect((await stop(s)).status).toBe(200);
    s.tunnel!.socket.close();
  });

  it("lets exactly one of two starts fired together win; the loser leaves nothing on the platform", async () => {
    const s = await streamer();
    const responses = await Promise.all([start(s, { title: unique("Race A") }), start(s, { title: unique("Race B") })]);
    expect(responses.map((r) => r.status).sort()).toEqual([201, 409]);
    const winner = responses.find((r) => r.status === 201)!;
    await expectProblem(responses.find((r) => r.status === 409)!, 409, "STREAM_ALREADY_RUNNING");
    const { broadcast_id } = (await winner.json()) as { broadcast_id: string };
    const running = await runningFor(s.who.sub);
    expect(running.broadcasts.map((b) => b.id)).toEqual([broadcast_id]);
    expect(running.streams).toHaveLength(1);
    expect(streamCommands(s).filter((c) => c.method === "POST").map((c) => (c.body as { broadcast_id: string }).broadcast_id)).toEqual([broadcast_id]);
    expect((await streamRow(s.camera.id))!.broadcast_id).toBe(broadcast_id);
    expect((await stop(s)).status).toBe(200);
    s.tunnel!.socket.close();
  });
});

describe("the video account's access token", () => {
  it("is refreshed when the platform no longer takes it", async () => {
    const s = await streamer();
    const old = (await videoLink(s.userId)).accessToken;
    const expired = await fetch(new URL("/__expire", FAKE_YOUTUBE_API), { method: "POST", body: JSON.stringify({ token: old }) });
    expect(expired.status).toBe(204);
    // The platform really refuses it now.
    const probe = await fetch(new URL("liveBroadcasts?part=id&id=none", FAKE_YOUTUBE_API), { headers: { Authorization: `Bearer ${old}` } });
    expect(probe.status).toBe(401);

    const started = await start(s, { title: unique("Refreshed") });
    expect(started.status, await started.clone().text()).toBe(201);
    const { broadcast_id } = (await started.json()) as { broadcast_id: string };
    expect(await broadcast(broadcast_id)).toMatchObject({ owner_sub: s.who.sub, lifeCycleStatus: "ready" });
    expect((await videoLink(s.userId)).accessToken).not.toBe(old);
    expect((await stop(s)).status).toBe(200);
    s.tunnel!.socket.close();
  });

  it("is refreshed before the call when its stored expiry has passed", async () => {
    const s = await streamer();
    const old = (await videoLink(s.userId)).accessToken;
    await env.DB.prepare("UPDATE oauth_accounts SET access_token_expires_at = unixepoch() - 10 WHERE user_id = ? AND provider = 'google-youtube'").bind(s.userId).run();
    const started = await start(s, { title: unique("Expired") });
    expect(started.status, await started.clone().text()).toBe(201);
    const link = await videoLink(s.userId);
    expect(link.accessToken).not.toBe(old);
    expect(link.expiresAt).toBeGreaterThan(Date.now() / 1000 + 3_000);
    expect((await stop(s)).status).toBe(200);
    s.tunnel!.socket.close();
  });
});
