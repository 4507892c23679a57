import { describe, expect, it } from "vitest";
import { bearer } from "../../../support/accounts";
import { cameraApi } from "../../../support/camera";
import { api, apiWithVars, expectProblem } from "../../../support/http";
import {
  broadcast,
  broadcastsOf,
  broadcastsTitled,
  streamer as newStreamer,
  platform,
  runningFor,
  type Streamer,
  type StreamerOptions,
  start,
  stop,
  streamCommands,
  streamPath,
  streamRow,
  unique,
  watchMarker,
} from "../../../support/streams";

// Refused live streams (issue 12), against the fake YouTube API and a test device on the tunnel:
// no linked video account, another's camera or product, the device offline or refusing, the
// platform refusing, down or too slow, the product's five videos already there, a second start
// (also two fired together). Each leaves nothing running on the platform, in D1 or on the device;
// a stop refused because the five videos filled up meanwhile still ends the stream. The fake's
// state is shared by every test file: tests look at their own Google sub's broadcasts, or at one
// broadcast by id or title. The start -> state -> stop path is in streams.test.ts.

/** A streamer (test/support/streams.ts) who is a new user of this file. */
const streamer = (options?: StreamerOptions) => newStreamer("streamno", options);

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
    await expectProblem(
      await cameraApi(bob.token, streamPath(alice), { method: "POST", body: { product_id: bob.product, title } }),
      404,
      "CAMERA_NOT_FOUND",
    );
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
    const s = await streamer({
      answer: (request) => (request.method === "POST" ? { status: 500, data: { detail: "encoder busy" } } : { status: 200, data: {} }),
    });
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
    expect(
      streamCommands(s)
        .filter((c) => c.method === "POST")
        .map((c) => (c.body as { broadcast_id: string }).broadcast_id),
    ).toEqual([broadcast_id]);
    expect((await streamRow(s.camera.id))!.broadcast_id).toBe(broadcast_id);
    expect((await stop(s)).status).toBe(200);
    s.tunnel!.socket.close();
  });
});
