import { DurableObject } from "cloudflare:workers";
import type { Services } from "../../../container";
import { createLogger } from "../../../lib/logger";
import { buildServices } from "../../../services/platform/build-services";
import { cameraConfig } from "../config";
import {
  CAMERA_ID_HEADER,
  type CameraRelayApi,
  CLOSE_CODES,
  CLOSE_TOO_BIG,
  HEARTBEAT_INTERVAL_MS,
  MAX_BINARY_FRAME_BYTES,
  MAX_PENDING_COMMANDS,
  MAX_TEXT_FRAME_BYTES,
  OFFLINE_AFTER_MS,
  parseDeviceFrame,
  type RelayCommand,
  type RelayOutcome,
  type RequestFrame,
  type ResponseFrame,
  type TunnelStatus,
  textFrameBytes,
} from "../protocol";
import { recordLastSeen } from "./camera-last-seen";
import { checkWatchedStream, STREAM_KEY, type WatchedStream } from "./camera-stream-watch";

/** What the object keeps on each socket (`serializeAttachment`), so it survives hibernation. */
export interface TunnelState {
  cameraId: string;
  /** Epoch milliseconds. */
  connectedAt: number;
  /** Last frame from the device that proves it alive (a pong or a response), epoch ms. */
  lastSeenAt: number;
  /** When `cameras.last_seen_at` was last written, epoch ms. */
  lastRecordedAt: number;
}

// D1 gets the last-seen time at most this often per camera (status reads ask the object itself);
// the same write tells the heartbeat whether the camera still exists.
const RECORD_EVERY_MS = 60_000;
/** Storage key of the tombstone a deleted camera's object keeps: camera ids are never reused. */
const RETIRED_KEY = "retired";

const log = createLogger({ component: "camera-relay" });

interface Pending {
  socket: WebSocket;
  settle: (outcome: RelayOutcome) => void;
  /** The response frame, once it came, when a binary frame is still to follow. */
  awaiting: ResponseFrame | null;
}

/**
 * One instance per paired camera (`CAMERA_RELAY.idFromName(camera_id)`), holding the device's
 * tunnel. The Worker authenticates the handshake and forwards it; the object accepts it with the
 * hibernation API, so an idle tunnel costs no running object between heartbeats. Everything that
 * must outlive a hibernation is on the socket (`TunnelState`) or in the scheduled alarm; only
 * commands in flight are in memory, and an object with a command in flight is never evicted.
 * The object's own storage holds that alarm and, once the camera is deleted, a tombstone that
 * refuses any later tunnel (docs/storage.md).
 */
export class CameraRelay extends DurableObject<Env> implements Omit<CameraRelayApi, "fetch"> {
  private readonly pending = new Map<string, Pending>();
  /** The command whose binary frame comes next on the socket, if any. */
  private awaitingBinary: string | null = null;
  /**
   * A binary frame that arrived before the response frame announcing it. The device sends them in
   * order, but the runtime may hand the object the binary event first (seen in workerd under load:
   * about 4 in 100 binary answers); it waits here for the next response frame of the same socket.
   */
  private earlyBinary: { socket: WebSocket; bytes: Uint8Array } | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // A device's own keep-alive pings are answered by the runtime without waking the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair('{"type":"ping"}', '{"type":"pong"}'));
  }

  /** The service container of one call of this object (fetch, alarm, close): only those touch D1. */
  private services(): Services {
    return buildServices(this.env, { log, defer: (work) => this.ctx.waitUntil(work) });
  }

  /** The tunnel handshake, already authenticated by the Worker: replaces any earlier tunnel. */
  override async fetch(request: Request): Promise<Response> {
    const cameraId = request.headers.get(CAMERA_ID_HEADER);
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket" || !cameraId) {
      return new Response("expected an authenticated WebSocket upgrade", { status: 400 });
    }
    // A handshake authenticated just before the camera's deletion must not outlive it.
    if (await this.ctx.storage.get(RETIRED_KEY)) return new Response("camera deleted", { status: 410 });
    for (const old of this.ctx.getWebSockets()) this.closeSocket(old, CLOSE_CODES.replaced, "replaced by a new connection");

    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server, [cameraId]);
    const now = Date.now();
    server.serializeAttachment({ cameraId, connectedAt: now, lastSeenAt: now, lastRecordedAt: now } satisfies TunnelState);
    await this.ctx.storage.setAlarm(now + HEARTBEAT_INTERVAL_MS);
    await recordLastSeen(this.services(), cameraId, now, "tunnel opened");
    return new Response(null, { status: 101, webSocket: client });
  }

  /**
   * Sends one command down the tunnel and waits for the matching response (and its binary frame
   * when `has_binary`). Without a live heartbeat it answers `offline` at once.
   */
  async relay(command: RelayCommand, timeoutMs: number): Promise<RelayOutcome> {
    const socket = this.liveSocket(Date.now());
    if (!socket) return { ok: false, reason: "offline" };
    if (this.pending.size >= MAX_PENDING_COMMANDS) return { ok: false, reason: "busy" };
    const id = crypto.randomUUID();
    const frame: RequestFrame = {
      type: "request",
      id,
      method: command.method,
      path: command.path,
      params: command.params ?? {},
      body: command.body ?? null,
      headers: command.headers ?? {},
    };
    const text = JSON.stringify(frame);
    if (textFrameBytes(text) > MAX_TEXT_FRAME_BYTES) return { ok: false, reason: "too-large" };

    return new Promise<RelayOutcome>((resolve) => {
      const timer = setTimeout(() => settle({ ok: false, reason: "timeout" }), timeoutMs);
      const settle = (outcome: RelayOutcome) => {
        clearTimeout(timer);
        this.pending.delete(id);
        if (this.awaitingBinary === id) this.awaitingBinary = null;
        resolve(outcome);
      };
      this.pending.set(id, { socket, settle, awaiting: null });
      try {
        socket.send(text);
      } catch {
        settle({ ok: false, reason: "disconnected" });
      }
    });
  }

  /** Whether the camera has a live tunnel, since when, and when it was last heard from. */
  async status(): Promise<TunnelStatus> {
    const now = Date.now();
    const live = this.liveSocket(now);
    const newest = this.sockets().at(-1);
    return {
      online: live !== null,
      connectedAt: live ? this.state(live).connectedAt : null,
      lastSeenAt: newest ? this.lastSeen(newest.socket) : null,
    };
  }

  /**
   * Ends the tunnel because the camera was deleted: tells a connected device to forget its
   * pairing (`DELETE /pairing`, not waited for), closes with 4001, and clears the alarm.
   * `notify: false` when the device asked for it itself.
   */
  async unpair(notify: boolean): Promise<void> {
    await this.ctx.storage.put(RETIRED_KEY, true);
    for (const socket of this.ctx.getWebSockets()) {
      if (notify) {
        const frame: RequestFrame = {
          type: "request",
          id: crypto.randomUUID(),
          method: "DELETE",
          path: "/pairing",
          params: {},
          body: null,
          headers: {},
        };
        try {
          socket.send(JSON.stringify(frame));
        } catch {
          // Already gone: nothing to tell.
        }
      }
      this.closeSocket(socket, CLOSE_CODES.unpaired, "camera unpaired");
    }
    await this.ctx.storage.delete(STREAM_KEY);
    await this.ctx.storage.deleteAlarm();
  }

  /** Starts watching the camera's live stream: if the device is gone for 5 minutes, the alarm ends it. */
  async watchStream(cameraId: string, broadcastId: string): Promise<void> {
    await this.ctx.storage.put(STREAM_KEY, { cameraId, broadcastId, offlineSince: null } satisfies WatchedStream);
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + HEARTBEAT_INTERVAL_MS);
  }

  /**
   * The stream of this broadcast ended (or never started): nothing to watch. A later stream's
   * watch is left alone, so a clean-up that arrives late cannot drop it.
   */
  async unwatchStream(broadcastId: string): Promise<void> {
    const watched = await this.ctx.storage.get<WatchedStream>(STREAM_KEY);
    if (watched && watched.broadcastId === broadcastId) await this.ctx.storage.delete(STREAM_KEY);
  }

  /**
   * The heartbeat: pings every live tunnel and closes those silent for longer than 90 s. About
   * once a minute it also records the last sign of life in D1, and a camera that is gone there
   * (deleted while this object missed it, or its owner deactivated) is unpaired here.
   */
  override async alarm(): Promise<void> {
    if (!cameraConfig(this.env).enabled) {
      // The plugin was switched off: no tunnel may stay, and nothing is watched any more.
      for (const socket of this.ctx.getWebSockets()) this.closeSocket(socket, 1001, "camera plugin switched off");
      return;
    }
    const svc = this.services();
    const now = Date.now();
    let open = 0;
    for (const socket of this.ctx.getWebSockets()) {
      const state = this.state(socket);
      if (now - this.lastSeen(socket) > OFFLINE_AFTER_MS) {
        await recordLastSeen(svc, state.cameraId, this.lastSeen(socket), "heartbeat lost");
        this.closeSocket(socket, CLOSE_CODES.heartbeatTimeout, "no heartbeat");
        continue;
      }
      if (now - state.lastRecordedAt >= RECORD_EVERY_MS) {
        socket.serializeAttachment({ ...state, lastRecordedAt: now });
        const camera = await recordLastSeen(svc, state.cameraId, this.lastSeen(socket), "heartbeat");
        if (camera === "deleted") {
          await this.unpair(true);
          return;
        }
        if (camera === "owner-inactive") {
          // Not unpaired: the device may come back once the account is active again.
          this.closeSocket(socket, CLOSE_CODES.ownerInactive, "owner account inactive");
          continue;
        }
      }
      try {
        socket.send('{"type":"ping"}');
        open++;
      } catch {
        this.failPending(socket);
      }
    }
    const watching = await checkWatchedStream(this.ctx.storage, svc, this.liveSocket(now) !== null, now);
    if (open > 0 || watching) await this.ctx.storage.setAlarm(now + HEARTBEAT_INTERVAL_MS);
  }

  override async webSocketMessage(socket: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if (typeof message !== "string") return this.binaryFrame(socket, message);
    if (textFrameBytes(message) > MAX_TEXT_FRAME_BYTES) {
      this.closeSocket(socket, CLOSE_TOO_BIG, "text frame over 64 KiB");
      return;
    }
    const frame = parseDeviceFrame(message);
    if (!frame) return; // Unknown frames are ignored: newer devices may send more than this side knows.
    this.touch(socket);
    if (frame.type === "ping") {
      // A ping spelt differently from the auto-response's exact bytes wakes the object; answer it too.
      socket.send('{"type":"pong"}');
      return;
    }
    if (frame.type === "pong") return;

    if (this.awaitingBinary !== null) {
      // The binary frame promised by the previous response did not come next.
      this.pending.get(this.awaitingBinary)?.settle({ ok: false, reason: "protocol" });
    }
    const early = this.earlyBinary?.socket === socket ? this.earlyBinary.bytes : null;
    this.earlyBinary = null;
    const pending = this.pending.get(frame.id);
    if (!pending || pending.socket !== socket) return; // Late (timed out) or not ours.
    if (frame.has_binary && early) {
      pending.settle({ ok: true, status: frame.status, contentType: frame.content_type, data: frame.data, binary: early });
      return;
    }
    if (frame.has_binary) {
      pending.awaiting = frame;
      this.awaitingBinary = frame.id;
      return;
    }
    pending.settle({ ok: true, status: frame.status, contentType: frame.content_type, data: frame.data, binary: null });
  }

  override async webSocketClose(socket: WebSocket, code: number, reason: string): Promise<void> {
    this.failPending(socket);
    await recordLastSeen(this.services(), this.state(socket).cameraId, this.lastSeen(socket), "tunnel closed");
    this.closeSocket(socket, code === 1005 || code === 1006 ? 1000 : code, reason);
    // The last tunnel is gone: no heartbeat to run, unless a stream is watched (its alarm ends it).
    if (this.ctx.getWebSockets().length <= 1 && !(await this.ctx.storage.get(STREAM_KEY))) await this.ctx.storage.deleteAlarm();
  }

  override async webSocketError(socket: WebSocket): Promise<void> {
    this.failPending(socket);
  }

  private binaryFrame(socket: WebSocket, message: ArrayBuffer): void {
    if (message.byteLength > MAX_BINARY_FRAME_BYTES) {
      this.closeSocket(socket, CLOSE_TOO_BIG, "binary frame over 10 MiB");
      return;
    }
    const id = this.awaitingBinary;
    if (id === null) {
      this.earlyBinary = { socket, bytes: new Uint8Array(message) };
      return;
    }
    this.awaitingBinary = null;
    const pending = this.pending.get(id);
    if (!pending?.awaiting || pending.socket !== socket) return;
    const { status, content_type: contentType, data } = pending.awaiting;
    pending.settle({ ok: true, status, contentType, data, binary: new Uint8Array(message) });
  }

  private state(socket: WebSocket): TunnelState {
    return socket.deserializeAttachment() as TunnelState;
  }

  /** Open sockets with their state, oldest first. */
  private sockets(): { socket: WebSocket; state: TunnelState }[] {
    return this.ctx
      .getWebSockets()
      .filter((socket) => socket.readyState === WebSocket.OPEN)
      .map((socket) => ({ socket, state: this.state(socket) }))
      .sort((a, b) => a.state.connectedAt - b.state.connectedAt);
  }

  /** The device's last sign of life: a frame it sent, or a keep-alive the runtime answered for it. */
  private lastSeen(socket: WebSocket): number {
    const auto = this.ctx.getWebSocketAutoResponseTimestamp(socket)?.getTime() ?? 0;
    return Math.max(this.state(socket).lastSeenAt, auto);
  }

  /** The newest tunnel with a heartbeat within the last 90 s, or null (the camera is offline). */
  private liveSocket(now: number): WebSocket | null {
    const newest = this.sockets().at(-1);
    return newest && now - this.lastSeen(newest.socket) <= OFFLINE_AFTER_MS ? newest.socket : null;
  }

  private touch(socket: WebSocket): void {
    socket.serializeAttachment({ ...this.state(socket), lastSeenAt: Date.now() });
  }

  private failPending(socket: WebSocket): void {
    for (const pending of [...this.pending.values()]) {
      if (pending.socket === socket) pending.settle({ ok: false, reason: "disconnected" });
    }
  }

  private closeSocket(socket: WebSocket, code: number, reason: string): void {
    this.failPending(socket);
    try {
      socket.close(code, reason);
    } catch {
      // Already closing or closed.
    }
  }
}
