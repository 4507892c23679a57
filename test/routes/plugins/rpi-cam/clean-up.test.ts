import { createExecutionContext, createMessageBatch, createScheduledController, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../../../src/index";
import { RECONCILE_AFTER_SECONDS } from "../../../../src/plugins/rpi-cam/services/camera-clean-up";
import { verifiedUser } from "../../../support/accounts";
import { openTunnel, pairCamera } from "../../../support/camera";
import { broadcast, runningFor, start, stop, streamer, unique, watchMarker } from "../../../support/streams";

// The camera plugin's side of the core's deletions (docs/architecture.md): the cascade takes its
// rows, triggers keep what it still owes in camera_retirements and camera_stream_endings, and the
// plugin works them off on the domain event, or at the scheduled reconciliation when the event was
// lost. Here the deletions go straight to D1, as a crash between the commit and the event would
// leave them: the rows are kept, nothing happens until an event or the reconciliation comes. The
// ordinary path (deletion through the API, the event after it) is in streams-cleanup.test.ts and
// device.test.ts.

const count = async (sql: string, ...values: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...values)
    .first<{ n: number }>())!.n;
const endingsOf = (cameraId: string) => count("SELECT count(*) AS n FROM camera_stream_endings WHERE camera_id = ?", cameraId);
const retirementsOf = (cameraId: string) => count("SELECT count(*) AS n FROM camera_retirements WHERE camera_id = ?", cameraId);

/** The Worker's Cron Trigger, `secondsLater` after now. */
const cronRun = (secondsLater: number) =>
  worker.scheduled(createScheduledController({ scheduledTime: Date.now() + secondsLater * 1000, cron: "*/5 * * * *" }), env);

/** Delivers one domain event to the Worker's queue consumer, with `vars` over the bindings; the acks and retries. */
async function deliver(body: unknown, vars: Record<string, string> = {}) {
  const batch = createMessageBatch("relab-events", [{ id: `e-${crypto.randomUUID()}`, timestamp: new Date(), attempts: 1, body }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...vars } as typeof env);
  const result = await getQueueResult(batch, ctx);
  return { acked: result.explicitAcks.length === 1, retried: result.retryMessages.length === 1 };
}

/** A verified user without products (so D1 lets the account row go) with a camera online. */
async function cameraOwner(prefix: string) {
  const user = await verifiedUser(prefix);
  const camera = await pairCamera(user.tokens.access_token);
  const tunnel = await openTunnel(camera);
  return { user, camera, tunnel };
}

describe("a deletion whose event never came", () => {
  it("leaves the stream of a deleted product to the reconciliation, which ends it once the event is overdue", async () => {
    const s = await streamer("cleanlost");
    const started = await start(s, { title: unique("Lost event") });
    expect(started.status, await started.clone().text()).toBe(201);
    const { broadcast_id } = (await started.json()) as { broadcast_id: string };

    await env.DB.prepare("DELETE FROM products WHERE id = ?").bind(s.product).run();
    // The stream's row (with its sealed key) went with the product; what ending it needs is kept.
    expect(await count("SELECT count(*) AS n FROM camera_streams WHERE camera_id = ?", s.camera.id)).toBe(0);
    expect(await endingsOf(s.camera.id)).toBe(1);

    // Not yet overdue: an event may still come.
    await cronRun(0);
    expect(await endingsOf(s.camera.id)).toBe(1);
    expect(await broadcast(broadcast_id)).toMatchObject({ lifeCycleStatus: "ready" });

    await cronRun(RECONCILE_AFTER_SECONDS + 60);
    expect(await endingsOf(s.camera.id)).toBe(0);
    expect(await broadcast(broadcast_id)).toMatchObject({ lifeCycleStatus: "complete", deleted: false });
    expect((await runningFor(s.who.sub)).streams).toEqual([]);
    expect(s.tunnel!.frames.filter((f) => f.type === "request").map((f) => `${f.method} ${f.path}`)).toEqual([
      "POST /streams/youtube",
      "DELETE /streams/youtube",
    ]);
    expect(await watchMarker(s.camera)).toBeUndefined();
    s.tunnel!.socket.close();
  });

  it("leaves the cameras of a deleted account to the reconciliation, which unpairs them", async () => {
    const { user, camera, tunnel } = await cameraOwner("cleangone");
    await env.DB.prepare("DELETE FROM users WHERE id = ?").bind(user.id).run();
    expect(await count("SELECT count(*) AS n FROM cameras WHERE id = ?", camera.id)).toBe(0);
    expect(await retirementsOf(camera.id)).toBe(1);

    await cronRun(RECONCILE_AFTER_SECONDS + 60);
    expect(await tunnel.closed).toMatchObject({ code: 4001 });
    expect(tunnel.frames.filter((f) => f.type === "request").map((f) => `${f.method} ${f.path}`)).toEqual(["DELETE /pairing"]);
    expect(await retirementsOf(camera.id)).toBe(0);
  });

  it("keeps nothing for what the plugin removes itself: a stopped stream, a camera its owner deletes", async () => {
    const s = await streamer("cleanself");
    const started = await start(s, { title: unique("Stopped") });
    expect(started.status).toBe(201);
    expect((await stop(s)).status).toBe(200);
    expect(await endingsOf(s.camera.id)).toBe(0);
    await env.DB.prepare("DELETE FROM cameras WHERE id = ?").bind(s.camera.id).run();
    expect(await retirementsOf(s.camera.id)).toBe(0);
    s.tunnel!.socket.close();
  });
});

describe("the domain events", () => {
  it("reach the plugin only while it is on: switched off, the event is acknowledged and nothing of the plugin runs", async () => {
    const { user, camera, tunnel } = await cameraOwner("cleanoff");
    await env.DB.prepare("DELETE FROM users WHERE id = ?").bind(user.id).run();
    const event = { type: "account.deleted", userId: user.id };

    expect(await deliver(event, { PLUGIN_RPI_CAM: "false" })).toEqual({ acked: true, retried: false });
    expect(await retirementsOf(camera.id)).toBe(1);
    expect(tunnel.frames.filter((f) => f.type === "request")).toEqual([]);

    expect(await deliver(event)).toEqual({ acked: true, retried: false });
    expect(await tunnel.closed).toMatchObject({ code: 4001 });
    expect(await retirementsOf(camera.id)).toBe(0);
    // Delivered again (at least once): nothing left to do, still acknowledged.
    expect(await deliver(event)).toEqual({ acked: true, retried: false });
  });

  it("a message that is no domain event is dropped, not retried", async () => {
    expect(await deliver({ type: "records.renamed", ids: [1] })).toEqual({ acked: true, retried: false });
    expect(await deliver({ type: "records.deleted", ids: ["1"] })).toEqual({ acked: true, retried: false });
    expect(await deliver("not an object")).toEqual({ acked: true, retried: false });
  });
});
