import { describe, expect, it } from "vitest";
import { expectProblem } from "../../../support/http";
import {
  asChannel,
  broadcast,
  completeOnPlatform,
  runningFor,
  type Streamer,
  start,
  stop,
  streamCommands,
  streamer,
  streamRow,
  unique,
  videosOf,
  watchMarker,
} from "../../../support/streams";

// The owner's stop when the platform is not where the service left it (issue 12), against the
// fake YouTube API and a test device on the tunnel: the broadcast already ended by the platform
// (auto-stop; a second transition is refused as redundant) is still saved; one that is gone from
// the platform (never went live) is not, and the stream still ends (409 STREAM_NOT_RECORDED); two
// stops fired together save one video, the second answered 404. The fake's state is shared by every test file: tests look at one broadcast by id.
// The start -> state -> stop path is in streams.test.ts.

/** A streamer (a new user of this file) whose camera streams: the streamer and the broadcast's id. */
async function streaming(): Promise<{ s: Streamer; broadcastId: string }> {
  const s = await streamer("streamstop");
  const started = await start(s, { title: unique("Stopping") });
  expect(started.status, await started.clone().text()).toBe(201);
  return { s, broadcastId: ((await started.json()) as { broadcast_id: string }).broadcast_id };
}

/** Nothing of the stream is left: no record, no watch, the ingest stream deleted, the device told to stop. */
async function expectEnded(s: Streamer): Promise<void> {
  expect(await streamRow(s.camera.id)).toBeNull();
  expect(await watchMarker(s.camera)).toBeUndefined();
  expect((await runningFor(s.who.sub)).streams).toEqual([]);
  expect(streamCommands(s).filter((c) => c.method === "DELETE").length).toBeGreaterThan(0);
}

describe("the owner's stop", () => {
  it("of a broadcast the platform already ended by itself still saves it as the product's video", async () => {
    const { s, broadcastId } = await streaming();
    await completeOnPlatform(s.userId, broadcastId);
    expect(await broadcast(broadcastId)).toMatchObject({ lifeCycleStatus: "complete", deleted: false });
    // What the service meets: the platform refuses to complete it again.
    const again = await asChannel(s.userId, "POST", `liveBroadcasts/transition?broadcastStatus=complete&id=${broadcastId}&part=status`);
    expect(again.status).toBe(403);
    expect(await again.text()).toContain("redundantTransition");

    const stopped = await stop(s);
    expect(stopped.status, await stopped.clone().text()).toBe(200);
    const video = (await stopped.json()) as { id: number; url: string };
    expect(video).toMatchObject({
      url: `https://www.youtube.com/watch?v=${broadcastId}`,
      video_metadata: { broadcast_id: broadcastId, ended_by: "owner" },
    });
    expect(await videosOf(s.product)).toEqual([expect.objectContaining({ id: video.id, url: video.url })]);
    expect(await broadcast(broadcastId)).toMatchObject({ lifeCycleStatus: "complete", deleted: false });
    await expectEnded(s);
    await expectProblem(await stop(s), 404, "RECORDING_STREAM_NOT_FOUND");
    s.tunnel!.socket.close();
  });

  it("of a broadcast gone from the platform (it never went live) ends the stream and saves no video", async () => {
    const { s, broadcastId } = await streaming();
    const deleted = await asChannel(s.userId, "DELETE", `liveBroadcasts?id=${broadcastId}`);
    expect(deleted.status, await deleted.clone().text()).toBe(204);

    // Nothing to save, and the answer says so (not that the product is full).
    const problem = await expectProblem(await stop(s), 409, "STREAM_NOT_RECORDED");
    expect(problem.detail).not.toContain("5 videos");
    expect(await videosOf(s.product)).toEqual([]);
    await expectEnded(s);
    await expectProblem(await stop(s), 404, "RECORDING_STREAM_NOT_FOUND");
    s.tunnel!.socket.close();
  });

  it("fired twice at once saves exactly one video, and the stream ends", async () => {
    const { s, broadcastId } = await streaming();
    const responses = await Promise.all([stop(s), stop(s)]);
    const statuses = responses.map((r) => r.status);
    expect(
      statuses.filter((status) => status === 200),
      JSON.stringify(statuses),
    ).toHaveLength(1);
    // The loser found the stream gone, before its stop or at its end: 404, never "the product is full".
    await expectProblem(responses.find((r) => r.status !== 200)!, 404, "RECORDING_STREAM_NOT_FOUND");

    const video = (await responses.find((r) => r.status === 200)!.json()) as { id: number };
    expect(await videosOf(s.product)).toEqual([
      expect.objectContaining({ id: video.id, url: `https://www.youtube.com/watch?v=${broadcastId}` }),
    ]);
    expect(await broadcast(broadcastId)).toMatchObject({ lifeCycleStatus: "complete", deleted: false });
    await expectEnded(s);
    s.tunnel!.socket.close();
  });
});
