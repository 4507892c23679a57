// The device API the backend relays through the tunnel, with the device's own allow-list.
import { randomInt } from "node:crypto";
import { capture, uploadPreviewThumbnail } from "./images.mjs";
import { log } from "./log.mjs";
import { fail, isObject, ok } from "./replies.mjs";
import { forgetPairing } from "./state.mjs";

const STARTED = Date.now();

export function createCamera() {
  return {
    resolution: [640, 480],
    controls: { ExposureTime: 10_000, AnalogueGain: 1.0, AwbEnable: true, AfMode: "continuous", LensPosition: 1.0 },
    previewing: false,
    previewTimer: null,
    // Only whether and where: the stream key stays out of the state and out of every log line.
    stream: null,
  };
}

function cameraState(camera) {
  if (camera.stream) return "streaming";
  return camera.previewing ? "previewing" : "idle";
}

export function stopPreview(camera) {
  clearInterval(camera.previewTimer);
  camera.previewTimer = null;
  camera.previewing = false;
}

// Two segments of MPEG-TS null packets: enough for a player to recognise the format.
function tsSegment(index) {
  const packets = 40;
  const bytes = new Uint8Array(packets * 188).fill(0xff);
  for (let n = 0; n < packets; n++) {
    const at = n * 188;
    bytes.set([0x47, 0x1f, 0xff, 0x10 | ((n + index) & 0x0f)], at);
  }
  return bytes;
}

function hlsFile(camera, encoded) {
  let name;
  try {
    name = decodeURIComponent(encoded);
  } catch {
    return fail(400, "Malformed HLS path.");
  }
  // The real device serves files from its preview directory; nothing may climb out of it.
  if (name.split("/").some((segment) => segment === "" || segment === "." || segment === "..") || /[\\\0-\x1f]/.test(name)) {
    return fail(400, "HLS paths stay inside the preview directory.");
  }
  if (!camera.previewing) return fail(404, "The preview is not running.");
  if (name === "index.m3u8") {
    const sequence = Math.floor((Date.now() - STARTED) / 2000);
    const playlist = [
      "#EXTM3U",
      "#EXT-X-VERSION:3",
      "#EXT-X-TARGETDURATION:2",
      `#EXT-X-MEDIA-SEQUENCE:${sequence}`,
      "#EXTINF:2.000,",
      "segment0.ts",
      "#EXTINF:2.000,",
      "segment1.ts",
      "",
    ].join("\n");
    return { status: 200, contentType: "application/vnd.apple.mpegurl", data: playlist };
  }
  const segment = /^segment([01])\.ts$/.exec(name);
  if (segment) return { status: 200, contentType: "video/mp2t", data: null, binary: tsSegment(Number(segment[1])) };
  return fail(404, "No such preview file.");
}

/**
 * The answerer of relayed request frames. `session` is shared with the tunnel: an unpairing
 * command marks it, so the tunnel's close is read as an unpairing rather than a drop.
 */
export function createCommands({ device, camera, session }) {
  // The device's own allow-list, checked whatever the backend already checked.
  const commands = [
    ["GET", /^\/camera$/, () => ok({ model: "Simulated Camera Module 3", resolution: camera.resolution, state: cameraState(camera) })],
    ["GET", /^\/camera\/controls$/, () => ok(camera.controls)],
    [
      "PATCH",
      /^\/camera\/controls$/,
      ({ body }) => {
        if (!isObject(body)) return fail(422, "Send the controls to change as a JSON object.");
        // A "__proto__" key from JSON would reach the prototype setter, not become a control.
        for (const [name, value] of Object.entries(body)) if (name !== "__proto__") camera.controls[name] = value;
        return ok(camera.controls);
      },
    ],
    [
      "PUT",
      /^\/camera\/focus$/,
      ({ body }) => {
        if (!isObject(body) || !["auto", "manual", "continuous"].includes(body.mode)) {
          return fail(422, "mode is auto, manual or continuous.");
        }
        if (body.mode === "manual" && typeof body.lens_position !== "number") {
          return fail(422, "Manual focus needs a numeric lens_position.");
        }
        camera.controls.AfMode = body.mode;
        if (typeof body.lens_position === "number") camera.controls.LensPosition = body.lens_position;
        return ok({ mode: body.mode, lens_position: camera.controls.LensPosition });
      },
    ],
    ["POST", /^\/captures$/, ({ body }) => capture(device, camera, body)],
    [
      "POST",
      /^\/preview\/start$/,
      () => {
        if (!camera.previewing) {
          camera.previewing = true;
          camera.previewTimer = setInterval(() => uploadPreviewThumbnail(device), 10_000);
          void uploadPreviewThumbnail(device);
        }
        return ok({ previewing: true });
      },
    ],
    [
      "POST",
      /^\/preview\/stop$/,
      () => {
        stopPreview(camera);
        return ok({ previewing: false });
      },
    ],
    ["GET", /^\/preview\/hls\/(.+)$/, (_frame, match) => hlsFile(camera, match[1])],
    [
      "GET",
      /^\/streams\/youtube$/,
      () => {
        if (!camera.stream) return fail(404, "No stream.");
        return ok({ streaming: true, broadcast_id: camera.stream.broadcastId, started_at: camera.stream.startedAt });
      },
    ],
    [
      "POST",
      /^\/streams\/youtube$/,
      ({ body }) => {
        const ingest =
          isObject(body) && typeof body.ingest_url === "string" && URL.canParse(body.ingest_url) ? new URL(body.ingest_url) : null;
        if (!ingest || !["rtmp:", "rtmps:"].includes(ingest.protocol) || !ingest.host) {
          return fail(422, "ingest_url must be an rtmp:// or rtmps:// URL.");
        }
        if (typeof body.stream_key !== "string" || body.stream_key === "") return fail(422, "stream_key is required.");
        if (typeof body.broadcast_id !== "string" || body.broadcast_id === "") return fail(422, "broadcast_id is required.");
        camera.stream = { broadcastId: body.broadcast_id, startedAt: new Date().toISOString() };
        // The host only: the key is a secret, and a path could carry one too.
        log(`streaming broadcast ${body.broadcast_id} to ${ingest.host}`);
        return ok({ streaming: true, broadcast_id: body.broadcast_id }, 201);
      },
    ],
    [
      "DELETE",
      /^\/streams\/youtube$/,
      () => {
        if (camera.stream) log(`stopped streaming broadcast ${camera.stream.broadcastId}`);
        camera.stream = null;
        return ok({ streaming: false });
      },
    ],
    [
      "GET",
      /^\/system\/telemetry$/,
      () =>
        ok({
          cpu_temperature_c: Math.round((46 + Math.random() * 12) * 10) / 10,
          cpu_percent: Math.round((camera.previewing ? 35 : 5) + Math.random() * 20),
          memory_percent: Math.round(30 + Math.random() * 15),
          disk_free_bytes: 12_000_000_000 + randomInt(900_000_000),
          uptime_s: Math.floor((Date.now() - STARTED) / 1000),
        }),
    ],
    ["GET", /^\/system\/local-access$/, () => ok({ api_key: device.state.local_api_key, local_urls: ["http://127.0.0.1:8018"] })],
    [
      "DELETE",
      /^\/pairing$/,
      () => {
        session.unpairedByServer = true;
        forgetPairing(device);
        // The server closes the tunnel itself after deleting a camera; should that close never come,
        // a device that forgot its identity hangs up anyway.
        setTimeout(() => session.tunnel?.close(1000, "unpaired"), 15_000).unref();
        return ok({ unpaired: true });
      },
    ],
  ];

  return async function answer(frame) {
    const path = typeof frame.path === "string" ? frame.path : "";
    for (const [method, pattern, handler] of commands) {
      const match = pattern.exec(path);
      if (match && method === frame.method) {
        try {
          return await handler(frame, match);
        } catch (error) {
          log(`command ${frame.method} ${path} crashed: ${error.message}`);
          return fail(500, "The simulated device failed.");
        }
      }
    }
    return fail(403, "Relay command is not allowed.");
  };
}
