import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { openFieldText, parseDataKey, singleKeyRing } from "../../../../src/lib/data-encryption";
import { cameraApi } from "../../../support/camera";
import { FAKE_YOUTUBE_API, FAKE_YOUTUBE_INGEST } from "../../../support/fake-upstream-config";
import { api, expectProblem, roundTrips } from "../../../support/http";
import { captureLogs } from "../../../support/logs";
import {
  broadcast,
  completeOnPlatform,
  streamer as newStreamer,
  runningFor,
  STREAM_KEY,
  type StreamerOptions,
  start,
  stop,
  streamCommands,
  streamPath,
  streamRow,
  unique,
  videoLink,
  watchMarker,
} from "../../../support/streams";

// Live streams to the video platform (issue 12): start -> state -> stop, saved as a product video,
// against the fake YouTube API (test/support/fake-video-platform.ts) and a test device on the
// tunnel. The stream key reaches the device and no one else (not in D1 in clear, not in any
// response or log line, nor in the device's state as GET passes it on); an expired provider token
// is refreshed. The fake's state is shared by
// every test file: tests look at their own Google sub's broadcasts, or at one broadcast by id.
// The refusals are in streams-refusals.test.ts; the stream's end without its device, and its
// record's removal, in streams-cleanup.test.ts.

/** A streamer (test/support/streams.ts) who is a new user of this file. */
const streamer = (options?: StreamerOptions) => newStreamer("streamer", options);

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
      expect(await broadcast(stream.broadcast_id)).toMatchObject({
        title,
        privacyStatus: "private",
        lifeCycleStatus: "ready",
        boundStreamId: expect.stringMatching(/^st-/),
        deleted: false,
        owner_sub: s.who.sub,
      });

      // D1 holds the key sealed (bound to the camera), never in clear.
      const row = (await streamRow(s.camera.id))!;
      expect(row).toMatchObject({ broadcast_id: stream.broadcast_id, user_id: s.userId, product_id: s.product });
      expect(row.stream_key_sealed).not.toContain(key);
      expect(
        await openFieldText(singleKeyRing(parseDataKey(env.DATA_ENCRYPTION_KEY)), row.stream_key_sealed, `stream-key:${s.camera.id}`),
      ).toBe(key);
      expect(await watchMarker(s.camera)).toEqual({ cameraId: s.camera.id, broadcastId: stream.broadcast_id, offlineSince: null });

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
    // The user; camera, product and running stream in one batch; the video link, read once for the
    // three platform calls (broadcast, stream, bind); the row.
    expect(roundTrips(started)).toBe(4);
    const stream = (await started.json()) as { broadcast_id: string; title: string; description: string | null; privacy_status: string };
    expect(stream).toMatchObject({
      title: expect.stringMatching(/^Teardown stream \d{4}-/),
      description: null,
      privacy_status: "unlisted",
    });
    expect(await broadcast(stream.broadcast_id)).toMatchObject({ title: stream.title, privacyStatus: "unlisted" });
    const stopped = await stop(s);
    expect(stopped.status).toBe(200);
    // The user; the camera with its stream; the link, once for both platform calls; the save-and-remove batch.
    expect(roundTrips(stopped)).toBe(4);
    s.tunnel!.socket.close();
  });
});

describe("the stream's state as GET reports it", () => {
  it("keeps only the device's known fields: a key the device reports never reaches the client", async () => {
    // A device whose state carries its secrets along: the key, an ingest URL with the key in it.
    type Sent = { stream_key: string; ingest_url: string; broadcast_id: string };
    const got: { sent?: Sent } = {};
    const s = await streamer({
      answer: (request) => {
        if (request.method === "POST") {
          got.sent = request.body as Sent;
          return { status: 201, data: { streaming: true } };
        }
        if (request.method !== "GET") return { status: 204 };
        return {
          status: 200,
          data: {
            streaming: true,
            broadcast_id: got.sent!.broadcast_id,
            started_at: "2026-01-02T03:04:05Z",
            fps: 25,
            bitrate_kbps: 4500,
            dropped_frames: 3,
            stream_key: got.sent!.stream_key,
            ingest_url: `${got.sent!.ingest_url}/${got.sent!.stream_key}`,
            rtmp: { url: got.sent!.ingest_url, key: got.sent!.stream_key },
            log: [`connected to ${got.sent!.ingest_url}/${got.sent!.stream_key}`],
          },
        };
      },
    });
    const started = await start(s, { title: unique("Chatty device") });
    expect(started.status, await started.clone().text()).toBe(201);
    const stream = (await started.json()) as { broadcast_id: string };
    const key = got.sent!.stream_key;
    expect(key).toMatch(STREAM_KEY);

    const read = await cameraApi(s.token, streamPath(s));
    expect(read.status).toBe(200);
    const text = await read.clone().text();
    expect(text).not.toContain(key);
    expect(text).not.toContain(FAKE_YOUTUBE_INGEST);
    expect(((await read.json()) as { device: unknown }).device).toEqual({
      streaming: true,
      broadcast_id: stream.broadcast_id,
      started_at: "2026-01-02T03:04:05Z",
      fps: 25,
      bitrate_kbps: 4500,
      dropped_frames: 3,
    });
    expect((await stop(s)).status).toBe(200);
    s.tunnel!.socket.close();
  });

  it("asks the platform for the broadcast's status at most once per 30 s, keeping it on the stream's row", async () => {
    const s = await streamer();
    const started = await start(s, { title: unique("Polled") });
    expect(started.status, await started.clone().text()).toBe(201);
    const { broadcast_id } = (await started.json()) as { broadcast_id: string };
    const read = async () => {
      const response = await cameraApi(s.token, streamPath(s));
      expect(response.status).toBe(200);
      return { status: ((await response.json()) as { platform_status: string | null }).platform_status, trips: roundTrips(response) };
    };

    // The user; the camera with its stream; the link; the status kept on the row.
    expect(await read()).toEqual({ status: "ready", trips: 4 });
    // The platform moves on; within 30 s the kept status answers, without asking it.
    await completeOnPlatform(s.userId, broadcast_id);
    expect(await read()).toEqual({ status: "ready", trips: 2 });
    await env.DB.prepare("UPDATE camera_streams SET platform_checked_at = platform_checked_at - 31 WHERE camera_id = ?")
      .bind(s.camera.id)
      .run();
    expect(await read()).toEqual({ status: "complete", trips: 4 });

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
    await env.DB.prepare(
      "UPDATE oauth_accounts SET access_token_expires_at = unixepoch() - 10 WHERE user_id = ? AND provider = 'google-youtube'",
    )
      .bind(s.userId)
      .run();
    const started = await start(s, { title: unique("Expired") });
    expect(started.status, await started.clone().text()).toBe(201);
    const link = await videoLink(s.userId);
    expect(link.accessToken).not.toBe(old);
    expect(link.expiresAt).toBeGreaterThan(Date.now() / 1000 + 3_000);
    expect((await stop(s)).status).toBe(200);
    s.tunnel!.socket.close();
  });
});
