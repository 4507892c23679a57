import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { TunnelState } from "../../../../src/plugins/rpi-cam/durable-objects/camera-relay";
import { STREAM_ORPHAN_AFTER_MS, type WatchedStream } from "../../../../src/plugins/rpi-cam/durable-objects/camera-stream-watch";
import { bearer } from "../../../support/accounts";
import { cameraApi, type TestCamera, type TestTunnel } from "../../../support/camera";
import { api } from "../../../support/http";
import { captureLogs } from "../../../support/logs";
import { asAdmin } from "../../../support/reference";
import { broadcast, relayOf, runningFor, type Streamer, start, streamer, unique, watchMarker } from "../../../support/streams";

// How a live stream ends without its owner's stop, and when its record (D1 camera_streams, with
// the sealed key) goes: the camera's object ends a stream whose device has been gone for
// STREAM_ORPHAN_AFTER_MS at its alarm (broadcast complete, product video saved, record removed),
// but not one whose device is there; the owner's stop works without the device; deleting the
// camera ends and saves its stream first, and so does deleting the owner's account; deleting the
// product ends its stream after the answer (nothing left to save it to).
// Against the fake YouTube API, whose state is shared by every test file: tests look at one
// broadcast by id. The start/stop path is in streams.test.ts, the refusals in
// streams-refusals.test.ts.

/** A streamer (test/support/streams.ts) whose camera is online and streaming: its tunnel and broadcast. */
type Streaming = Streamer & { tunnel: TestTunnel; broadcastId: string };

/** A verified owner (a new user of this file) with a linked video account, whose camera (online) streams to a product. */
async function streaming(): Promise<Streaming> {
  const s = await streamer("streamend");
  const started = await start(s, { title: unique("Left running") });
  expect(started.status, await started.clone().text()).toBe(201);
  const { broadcast_id } = (await started.json()) as { broadcast_id: string };
  expect(await streamRowCount(s.camera.id)).toBe(1);
  return { ...s, tunnel: s.tunnel!, broadcastId: broadcast_id };
}

/** Moves the marker's `offlineSince` `ms` into the past, as that long without the device would. */
const offlineFor = (camera: TestCamera, ms: number) =>
  runInDurableObject(relayOf(camera), async (_instance, state) => {
    const watched = (await state.storage.get<WatchedStream>("stream"))!;
    await state.storage.put("stream", { ...watched, offlineSince: Date.now() - ms } satisfies WatchedStream);
  });
const streamRowCount = async (cameraId: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM camera_streams WHERE camera_id = ?").bind(cameraId).first<{ n: number }>())!.n;
const videosOf = async (product: number) =>
  (await (await api(`/v1/products/${product}/videos`)).json()) as { url: string; video_metadata: Record<string, unknown> }[];
/** The object's scheduled alarm (epoch ms), or null. */
const scheduledAlarm = (camera: TestCamera) => runInDurableObject(relayOf(camera), (_instance, state) => state.storage.getAlarm());
/** Waits until the object has handled the tunnel's close (it holds no socket any more). */
const tunnelGone = (camera: TestCamera) =>
  expect.poll(() => runInDurableObject(relayOf(camera), (_instance, state) => state.getWebSockets().length), { timeout: 3_000 }).toBe(0);
/** Moves every tunnel's last sign of life past the 90 s a device may be silent. */
const silence = (camera: TestCamera) =>
  runInDurableObject(relayOf(camera), (_instance, state) => {
    for (const socket of state.getWebSockets()) {
      const tunnel = socket.deserializeAttachment() as TunnelState;
      socket.serializeAttachment({ ...tunnel, lastSeenAt: tunnel.lastSeenAt - 91_000 });
    }
  });
const cameraStatus = async (s: Streaming) =>
  ((await (await cameraApi(s.token, `/${s.camera.id}/status`)).json()) as { connection: string }).connection;

/** Asserts the stream was ended without its device and saved as the product's video. */
async function expectEndedByItself(s: Streaming): Promise<void> {
  expect(await broadcast(s.broadcastId)).toMatchObject({ lifeCycleStatus: "complete", deleted: false });
  expect((await runningFor(s.who.sub)).streams).toEqual([]);
  expect(await videosOf(s.product)).toEqual([
    expect.objectContaining({
      url: `https://www.youtube.com/watch?v=${s.broadcastId}`,
      video_metadata: expect.objectContaining({ broadcast_id: s.broadcastId, camera_id: s.camera.id, ended_by: "device_gone" }),
    }),
  ]);
  expect(await streamRowCount(s.camera.id)).toBe(0);
  expect(await watchMarker(s.camera)).toBeUndefined();
}

describe("a stream whose device went away", () => {
  it("ends by itself at the alarm once the tunnel has been closed for longer than the limit", async () => {
    const s = await streaming();
    s.tunnel.socket.close(1000, "power cut");
    await tunnelGone(s.camera);
    expect(await cameraStatus(s)).toBe("offline");
    // The heartbeat must stay scheduled while a stream is watched: it is what ends the stream.
    expect(await scheduledAlarm(s.camera), "the camera's object still has an alarm after the tunnel closed").not.toBeNull();
    await offlineFor(s.camera, STREAM_ORPHAN_AFTER_MS + 60_000);
    expect(await runDurableObjectAlarm(relayOf(s.camera))).toBe(true);
    await expectEndedByItself(s);
  });

  it("ends by itself at once when the device fell silent and the limit has passed", async () => {
    const s = await streaming();
    await silence(s.camera);
    await offlineFor(s.camera, STREAM_ORPHAN_AFTER_MS + 60_000);
    expect(await runDurableObjectAlarm(relayOf(s.camera))).toBe(true);
    expect(await s.tunnel.closed).toMatchObject({ code: 4002 });
    await expectEndedByItself(s);
    expect(s.tunnel.frames.filter((f) => f.type === "request" && f.method === "DELETE")).toEqual([]);
  });

  it("keeps running while the device is gone for less than the limit, then ends at a later alarm", async () => {
    const s = await streaming();
    await silence(s.camera);
    const before = Date.now();
    // The first alarm closes the silent tunnel and starts counting; the stream runs on.
    expect(await runDurableObjectAlarm(relayOf(s.camera))).toBe(true);
    expect(await s.tunnel.closed).toMatchObject({ code: 4002 });
    await tunnelGone(s.camera);
    expect((await watchMarker(s.camera))!.offlineSince).toBeGreaterThanOrEqual(before);
    expect(await streamRowCount(s.camera.id)).toBe(1);
    expect(await broadcast(s.broadcastId)).toMatchObject({ lifeCycleStatus: "ready" });
    expect(await videosOf(s.product)).toEqual([]);
    // Still watched: the next heartbeat is scheduled, and ends the stream once the limit has passed.
    expect(await scheduledAlarm(s.camera), "the camera's object still has an alarm after the tunnel closed").not.toBeNull();
    await offlineFor(s.camera, STREAM_ORPHAN_AFTER_MS + 1_000);
    expect(await runDurableObjectAlarm(relayOf(s.camera))).toBe(true);
    await expectEndedByItself(s);
  });

  it("is not ended while the device is connected, whatever the marker said", async () => {
    const s = await streaming();
    await offlineFor(s.camera, STREAM_ORPHAN_AFTER_MS + 60_000);
    expect(await runDurableObjectAlarm(relayOf(s.camera))).toBe(true);
    expect(await watchMarker(s.camera)).toEqual({ cameraId: s.camera.id, broadcastId: s.broadcastId, offlineSince: null });
    expect(await streamRowCount(s.camera.id)).toBe(1);
    expect(await broadcast(s.broadcastId)).toMatchObject({ lifeCycleStatus: "ready" });
    expect((await cameraApi(s.token, `/${s.camera.id}/recording-stream`, { method: "DELETE" })).status).toBe(200);
    s.tunnel.socket.close();
  });

  it("can still be stopped by its owner: saved as a video without asking the device", async () => {
    const s = await streaming();
    s.tunnel.socket.close(1000, "gone");
    await expect.poll(() => cameraStatus(s)).toBe("offline");
    const stopped = await cameraApi(s.token, `/${s.camera.id}/recording-stream`, { method: "DELETE" });
    expect(stopped.status, await stopped.clone().text()).toBe(200);
    expect(await stopped.json()).toMatchObject({
      url: `https://www.youtube.com/watch?v=${s.broadcastId}`,
      video_metadata: { ended_by: "owner" },
    });
    expect(await broadcast(s.broadcastId)).toMatchObject({ lifeCycleStatus: "complete" });
    expect(await streamRowCount(s.camera.id)).toBe(0);
    expect(await watchMarker(s.camera)).toBeUndefined();
  });
});

describe("the stream's record", () => {
  it("goes with the camera, whose stream is ended and saved first", async () => {
    const s = await streaming();
    expect((await cameraApi(s.token, `/${s.camera.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await streamRowCount(s.camera.id)).toBe(0);
    await s.tunnel.next((f) => f.type === "request" && f.path === "/pairing");
    expect(s.tunnel.frames.filter((f) => f.type === "request").map((f) => `${f.method} ${f.path}`)).toEqual([
      "POST /streams/youtube",
      "DELETE /streams/youtube",
      "DELETE /pairing",
    ]);
    expect(await broadcast(s.broadcastId)).toMatchObject({ lifeCycleStatus: "complete" });
    expect(await videosOf(s.product)).toEqual([expect.objectContaining({ url: `https://www.youtube.com/watch?v=${s.broadcastId}` })]);
  });

  it("goes with the owner's account, whose stream is ended and saved first", async () => {
    const s = await streaming();
    const deleted = await api("/v1/users/me", {
      method: "DELETE",
      headers: { ...bearer(s.token), "content-type": "application/json" },
      body: JSON.stringify({ current_password: s.password }),
    });
    expect(deleted.status, await deleted.clone().text()).toBe(204);
    expect(await streamRowCount(s.camera.id)).toBe(0);
    // Ended as the owner's stop would: the device told to stop, then (the camera gone) to unpair.
    await s.tunnel.next((f) => f.type === "request" && f.path === "/pairing");
    expect(s.tunnel.frames.filter((f) => f.type === "request").map((f) => `${f.method} ${f.path}`)).toEqual([
      "POST /streams/youtube",
      "DELETE /streams/youtube",
      "DELETE /pairing",
    ]);
    // The broadcast completed and its ingest stream deleted while the link could still do it.
    expect(await broadcast(s.broadcastId)).toMatchObject({ lifeCycleStatus: "complete", deleted: false });
    expect((await runningFor(s.who.sub)).streams).toEqual([]);
    // Saved on the product, which now belongs to the system account.
    expect(await videosOf(s.product)).toEqual([
      expect.objectContaining({
        url: `https://www.youtube.com/watch?v=${s.broadcastId}`,
        video_metadata: expect.objectContaining({ broadcast_id: s.broadcastId, ended_by: "owner" }),
      }),
    ]);
    const owner = await env.DB.prepare("SELECT u.is_system FROM products p JOIN users u ON u.id = p.owner_id WHERE p.id = ?")
      .bind(s.product)
      .first<{ is_system: number }>();
    expect(owner).toEqual({ is_system: 1 });
  });
  it("is watched per broadcast: a late clean-up of an earlier broadcast leaves the current stream's watch", async () => {
    const s = await streaming();
    await relayOf(s.camera).unwatchStream("bc-an-earlier-broadcast");
    expect(await watchMarker(s.camera)).toMatchObject({ broadcastId: s.broadcastId });
    await relayOf(s.camera).unwatchStream(s.broadcastId);
    expect(await watchMarker(s.camera)).toBeUndefined();
    expect((await cameraApi(s.token, `/${s.camera.id}/recording-stream`, { method: "DELETE" })).status).toBe(200);
    s.tunnel.socket.close();
  });

  it.each(["owner", "moderator"] as const)(
    "goes with its product (deleted by its %s), and the stream is ended after the answer: device stopped, broadcast completed, ingest key dead",
    async (by) => {
      const s = await streaming();
      const logs = captureLogs();
      try {
        // A moderator's deletion ends the stream with the owner's video link, as the owner's would.
        const path = `/v1/products/${s.product}`;
        const deleted = by === "owner" ? await api(path, { method: "DELETE", headers: bearer(s.token) }) : await asAdmin("DELETE", path);
        expect(deleted.status, await deleted.clone().text()).toBe(204);
        expect(await streamRowCount(s.camera.id)).toBe(0);
        // The broadcast stays on the owner's channel as the recording; there is no product to save it to.
        await expect.poll(async () => (await broadcast(s.broadcastId))?.lifeCycleStatus, { timeout: 5_000 }).toBe("complete");
        await expect.poll(async () => (await runningFor(s.who.sub)).streams, { timeout: 5_000 }).toEqual([]);
        expect(await broadcast(s.broadcastId)).toMatchObject({ deleted: false });
        // The device's stop is sent after the answer too: wait for its frame to arrive.
        await expect
          .poll(() => s.tunnel.frames.filter((f) => f.type === "request").map((f) => `${f.method} ${f.path}`), { timeout: 5_000 })
          .toEqual(["POST /streams/youtube", "DELETE /streams/youtube"]);
        await expect.poll(() => watchMarker(s.camera), { timeout: 5_000 }).toBeUndefined();
        await expect
          .poll(() => logs.entries().find((entry) => entry.msg === "camera stream ended"), { timeout: 5_000 })
          .toMatchObject({ camera_id: s.camera.id, reason: "product_deleted", recorded: true, saved: false });
      } finally {
        logs.restore();
      }
      s.tunnel.socket.close();
    },
  );
});
