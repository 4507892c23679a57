// Plays a Raspberry Pi camera against a local API, so the rpi-cam plugin can be tried and
// debugged without the hardware: it pairs with a code, keeps the relay tunnel open, answers the
// relayed commands of the device contract and uploads its (generated) pictures itself.
//
//   node scripts/camera-simulator.mjs [--base http://localhost:8787] [--state file] [--name "..."] [--unpair]
//
// Everything the device must remember (its key pair, its camera id, its local API key) lives in
// one JSON state file, like the real device's. It is a private key: keep it out of version control.
import { parseArgs } from "node:util";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { randomBytes, randomInt, randomUUID } from "node:crypto";
import WebSocket from "ws";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT } from "jose";
import { PhotonImage } from "@cf-wasm/photon/node";

const USAGE = `Usage: node scripts/camera-simulator.mjs [options]

Plays a paired Raspberry Pi camera against a relab API: pairs with a code the owner claims,
then keeps the relay tunnel open and answers the backend's commands.

Options:
  --base <url>    API origin (default http://localhost:8787)
  --state <file>  device state: key pair, camera id, local key (default .camera-simulator.json)
  --name <name>   camera name suggested in the claim command (default "Simulated camera")
  --unpair        ask the server to delete this camera, forget it locally, and exit
  -h, --help      this text

Exit status: 0 when stopped or unpaired, 1 when the server refused the camera or replaced
its tunnel, 2 for bad options.`;

let options;
try {
  ({ values: options } = parseArgs({
    options: {
      base: { type: "string", default: "http://localhost:8787" },
      state: { type: "string", default: ".camera-simulator.json" },
      name: { type: "string", default: "Simulated camera" },
      unpair: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (error) {
  console.error(`${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (options.help) {
  console.log(USAGE);
  process.exit(0);
}

const BASE = options.base.replace(/\/+$/, "");
const STATE_FILE = resolve(options.state);
const API = `${BASE}/v1/plugins/rpi-cam`;
const AUDIENCE = "relab-rpi-cam-relay";
const CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
const MAX_TEXT_FRAME = 64 * 1024;
const MAX_BINARY_FRAME = 10 * 1024 * 1024;
const STARTED = Date.now();

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const log = (line) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);

// ---- State ----------------------------------------------------------------------------------

function saveState(state) {
  // Written whole and renamed into place, so a crash never leaves half a private key behind.
  const temporary = `${STATE_FILE}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, STATE_FILE);
}

async function loadState() {
  if (existsSync(STATE_FILE)) {
    log(`state: ${STATE_FILE}`);
    return JSON.parse(readFileSync(STATE_FILE, "utf8"));
  }
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const privateJwk = await exportJWK(privateKey);
  const state = {
    key_id: `sim-${randomBytes(4).toString("hex")}`,
    private_jwk: privateJwk,
    fingerprint: await calculateJwkThumbprint({ kty: "EC", crv: "P-256", x: privateJwk.x, y: privateJwk.y }),
    local_api_key: randomBytes(24).toString("base64url"),
  };
  saveState(state);
  log(`new device key ${state.key_id}; state (holds the private key) written to ${STATE_FILE}`);
  return state;
}

function forgetPairing(state) {
  delete state.camera_id;
  delete state.ws_url;
  delete state.base;
  saveState(state);
}

const state = await loadState();
const signingKey = await importJWK(state.private_jwk, "ES256");
const publicJwk = { kty: "EC", crv: "P-256", x: state.private_jwk.x, y: state.private_jwk.y };

if (state.camera_id && state.base && state.base !== BASE) {
  console.error(`This state is paired with ${state.base}; run with --base ${state.base} or another --state.`);
  process.exit(2);
}

// ---- Device assertions and HTTP -------------------------------------------------------------

// A fresh short-lived token for every request: the server spends each jti once.
async function assertion() {
  const subject = `camera:${state.camera_id}`;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid: state.key_id, typ: "JWT" })
    .setIssuer(subject)
    .setSubject(subject)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + 60)
    .setJti(randomUUID())
    .sign(signingKey);
}

async function problemDetail(response) {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text);
    if (typeof body?.detail === "string") return body.detail;
  } catch {
    // Not JSON: the raw text says more than nothing.
  }
  return text.slice(0, 200) || response.statusText;
}

async function deviceFetch(path, init = {}) {
  const headers = { ...init.headers, Authorization: `Bearer ${await assertion()}` };
  return fetch(`${API}/device/cameras/${state.camera_id}${path}`, { ...init, headers });
}

// ---- Pictures -------------------------------------------------------------------------------

// A gradient whose colours shift with a seed, so no two captures have the same bytes.
function renderJpeg(width, height, seed) {
  const pixels = new Uint8Array(width * height * 4);
  const cx = (seed * 7919) % width;
  const cy = (seed * 104729) % height;
  const radius = Math.min(width, height) / 5;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 4;
      const inDisc = (x - cx) ** 2 + (y - cy) ** 2 < radius ** 2;
      pixels[at] = inDisc ? 255 - ((seed * 13) & 255) : ((x * 255) / width + seed) & 255;
      pixels[at + 1] = inDisc ? 240 : ((y * 255) / height + seed * 3) & 255;
      pixels[at + 2] = (((x ^ y) & 0x3f) + seed * 5) & 255;
      pixels[at + 3] = 255;
    }
  }
  const image = new PhotonImage(pixels, width, height);
  try {
    return image.get_bytes_jpeg(85);
  } finally {
    image.free();
  }
}

const freshSeed = () => (Date.now() ^ randomInt(1 << 30)) & 0x7fffffff;

// ---- The simulated camera -------------------------------------------------------------------

const camera = {
  resolution: [640, 480],
  controls: { ExposureTime: 10_000, AnalogueGain: 1.0, AwbEnable: true, AfMode: "continuous", LensPosition: 1.0 },
  previewing: false,
  previewTimer: null,
  // Only whether and where: the stream key stays out of the state and out of every log line.
  stream: null,
};

const ok = (data, status = 200) => ({ status, data });
const fail = (status, detail) => ({ status, data: { detail } });
const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);

function cameraState() {
  if (camera.stream) return "streaming";
  return camera.previewing ? "previewing" : "idle";
}

async function uploadPreviewThumbnail() {
  const form = new FormData();
  form.append("file", new Blob([renderJpeg(160, 120, freshSeed())], { type: "image/jpeg" }), "preview.jpg");
  try {
    const response = await deviceFetch("/preview-thumbnail-upload", { method: "POST", body: form });
    log(`preview thumbnail upload -> ${response.status}${response.ok ? "" : ` ${await problemDetail(response)}`}`);
  } catch (error) {
    log(`preview thumbnail upload failed: ${error.message}`);
  }
}

function stopPreview() {
  clearInterval(camera.previewTimer);
  camera.previewTimer = null;
  camera.previewing = false;
}

async function capture(body) {
  if (!isObject(body) || !Number.isInteger(body.product_id) || body.product_id <= 0) {
    return fail(422, "A capture needs a positive integer product_id.");
  }
  const capturedAt = new Date();
  const metadata = {
    ExposureTime: camera.controls.ExposureTime,
    AnalogueGain: camera.controls.AnalogueGain,
    LensPosition: camera.controls.LensPosition,
    captured_at: capturedAt.toISOString(),
  };
  const [width, height] = camera.resolution;
  const form = new FormData();
  const filename = `capture-${capturedAt.toISOString().replace(/[-:.]/g, "")}.jpg`;
  form.append("file", new Blob([renderJpeg(width, height, freshSeed())], { type: "image/jpeg" }), filename);
  form.append("capture_metadata", JSON.stringify(metadata));
  const upload = { product_id: body.product_id };
  if (typeof body.description === "string" && body.description !== "") upload.description = body.description;
  form.append("upload_metadata", JSON.stringify(upload));

  let response;
  try {
    response = await deviceFetch("/image-upload", { method: "POST", body: form });
  } catch (error) {
    log(`image upload failed: ${error.message}`);
    return fail(503, `The upload did not reach the server: ${error.message}`);
  }
  if (response.status !== 201) {
    const detail = await problemDetail(response);
    log(`image upload -> ${response.status} ${detail}`);
    return fail(response.status, detail);
  }
  const { image_id, image_url } = await response.json();
  log(`image upload -> 201 ${image_id} (product ${body.product_id})`);
  return ok({ status: "uploaded", image_id, image_url, metadata }, 201);
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

function hlsFile(encoded) {
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
    const playlist = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:2", `#EXT-X-MEDIA-SEQUENCE:${sequence}`,
      "#EXTINF:2.000,", "segment0.ts", "#EXTINF:2.000,", "segment1.ts", ""].join("\n");
    return { status: 200, contentType: "application/vnd.apple.mpegurl", data: playlist };
  }
  const segment = /^segment([01])\.ts$/.exec(name);
  if (segment) return { status: 200, contentType: "video/mp2t", data: null, binary: tsSegment(Number(segment[1])) };
  return fail(404, "No such preview file.");
}

// The device's own allow-list, checked whatever the backend already checked.
const COMMANDS = [
  ["GET", /^\/camera$/, () => ok({ model: "Simulated Camera Module 3", resolution: camera.resolution, state: cameraState() })],
  ["GET", /^\/camera\/controls$/, () => ok(camera.controls)],
  ["PATCH", /^\/camera\/controls$/, ({ body }) => {
    if (!isObject(body)) return fail(422, "Send the controls to change as a JSON object.");
    // A "__proto__" key from JSON would reach the prototype setter, not become a control.
    for (const [name, value] of Object.entries(body)) if (name !== "__proto__") camera.controls[name] = value;
    return ok(camera.controls);
  }],
  ["PUT", /^\/camera\/focus$/, ({ body }) => {
    if (!isObject(body) || !["auto", "manual", "continuous"].includes(body.mode)) {
      return fail(422, "mode is auto, manual or continuous.");
    }
    if (body.mode === "manual" && typeof body.lens_position !== "number") {
      return fail(422, "Manual focus needs a numeric lens_position.");
    }
    camera.controls.AfMode = body.mode;
    if (typeof body.lens_position === "number") camera.controls.LensPosition = body.lens_position;
    return ok({ mode: body.mode, lens_position: camera.controls.LensPosition });
  }],
  ["POST", /^\/captures$/, ({ body }) => capture(body)],
  ["POST", /^\/preview\/start$/, () => {
    if (!camera.previewing) {
      camera.previewing = true;
      camera.previewTimer = setInterval(uploadPreviewThumbnail, 10_000);
      void uploadPreviewThumbnail();
    }
    return ok({ previewing: true });
  }],
  ["POST", /^\/preview\/stop$/, () => {
    stopPreview();
    return ok({ previewing: false });
  }],
  ["GET", /^\/preview\/hls\/(.+)$/, (_frame, match) => hlsFile(match[1])],
  ["GET", /^\/streams\/youtube$/, () => {
    if (!camera.stream) return fail(404, "No stream.");
    return ok({ streaming: true, ingest_url: camera.stream.ingestUrl, started_at: camera.stream.startedAt });
  }],
  ["POST", /^\/streams\/youtube$/, ({ body }) => {
    if (!isObject(body) || typeof body.ingest_url !== "string" || !/^rtmps?:\/\//.test(body.ingest_url)) {
      return fail(422, "ingest_url must be an rtmp:// or rtmps:// URL.");
    }
    if (typeof body.stream_key !== "string" || body.stream_key === "") return fail(422, "stream_key is required.");
    camera.stream = { ingestUrl: body.ingest_url, startedAt: new Date().toISOString() };
    return ok({ streaming: true }, 201);
  }],
  ["DELETE", /^\/streams\/youtube$/, () => {
    camera.stream = null;
    return ok({ streaming: false });
  }],
  ["GET", /^\/system\/telemetry$/, () => ok({
    cpu_temperature_c: Math.round((46 + Math.random() * 12) * 10) / 10,
    cpu_percent: Math.round((camera.previewing ? 35 : 5) + Math.random() * 20),
    memory_percent: Math.round(30 + Math.random() * 15),
    disk_free_bytes: 12_000_000_000 + randomInt(900_000_000),
    uptime_s: Math.floor((Date.now() - STARTED) / 1000),
  })],
  ["GET", /^\/system\/local-access$/, () => ok({ api_key: state.local_api_key, local_urls: ["http://127.0.0.1:8018"] })],
  ["DELETE", /^\/pairing$/, () => {
    unpairedByServer = true;
    forgetPairing(state);
    // The server closes the tunnel itself after deleting a camera; should that close never come,
    // a device that forgot its identity hangs up anyway.
    setTimeout(() => tunnel?.close(1000, "unpaired"), 15_000).unref();
    return ok({ unpaired: true });
  }],
];

async function answer(frame) {
  const path = typeof frame.path === "string" ? frame.path : "";
  for (const [method, pattern, handler] of COMMANDS) {
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
}

// ---- Tunnel ---------------------------------------------------------------------------------

let unpairedByServer = false;
let stopping = false;
let tunnel = null;

async function handleRequest(socket, frame) {
  const result = await answer(frame);
  let binary = result.binary ?? null;
  let text = JSON.stringify({
    type: "response",
    id: frame.id,
    status: result.status,
    content_type: result.contentType ?? (result.data === null || result.data === undefined ? null : "application/json"),
    has_binary: binary !== null,
    data: result.data ?? null,
  });
  // The relay closes the whole tunnel over an oversized frame: better to fail one command.
  if (Buffer.byteLength(text) > MAX_TEXT_FRAME || (binary && binary.byteLength > MAX_BINARY_FRAME)) {
    result.status = 500;
    binary = null;
    const data = { detail: "Answer too large." };
    text = JSON.stringify({ type: "response", id: frame.id, status: 500, content_type: "application/json", has_binary: false, data });
  }
  log(`${frame.method} ${frame.path} -> ${result.status}`);
  if (socket.readyState !== WebSocket.OPEN) return;
  // Both sends queue in the same tick, so no other answer can slip between a response and its bytes.
  socket.send(text);
  if (binary) socket.send(binary, { binary: true });
}

/** One tunnel's life: resolves with how it ended. */
async function runTunnel() {
  const token = await assertion();
  return new Promise((settleTunnel) => {
    let opened = false;
    let settled = false;
    const settle = (outcome) => {
      if (!settled) {
        settled = true;
        tunnel = null;
        settleTunnel(outcome);
      }
    };
    // No Origin header: the server refuses tunnels that look like they come from a browser.
    const socket = new WebSocket(state.ws_url, {
      headers: { Authorization: `Bearer ${token}` },
      perMessageDeflate: false,
      handshakeTimeout: 15_000,
    });
    tunnel = socket;

    socket.on("unexpected-response", (_request, response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => (body += chunk));
      response.on("end", () => {
        let detail = body.slice(0, 200);
        try {
          detail = JSON.parse(body).detail ?? detail;
        } catch {
          // Keep the raw text.
        }
        settle({ refused: response.statusCode, detail, retryAfter: Number(response.headers["retry-after"]) || 0 });
        socket.terminate();
      });
    });
    socket.on("open", () => {
      opened = true;
      log(`connected: tunnel open for camera ${state.camera_id}`);
    });
    socket.on("message", (data, isBinary) => {
      if (isBinary) return;
      let frame;
      try {
        frame = JSON.parse(data.toString("utf8"));
      } catch {
        return;
      }
      if (frame?.type === "ping") socket.send('{"type":"pong"}');
      else if (frame?.type === "request" && typeof frame.id === "string") void handleRequest(socket, frame);
    });
    socket.on("error", (error) => {
      if (!opened) settle({ error: error.message });
    });
    socket.on("close", (code, reason) => settle({ opened, code, reason: reason.toString() }));
  });
}

async function keepTunnel() {
  let backoff = 1000;
  for (;;) {
    const outcome = await runTunnel();
    if (stopping) return 0;
    if (outcome.refused === 401) {
      console.error(
        `The server refused this camera's assertion (401: ${outcome.detail}).\n` +
          "The camera was deleted or its key revoked. Run with --unpair to forget it here, then start again to pair anew.",
      );
      return 1;
    }
    if (outcome.code === 4001 || unpairedByServer) {
      if (state.camera_id) forgetPairing(state);
      log(`unpaired (close ${outcome.code}): camera forgotten; run again to pair anew`);
      return 0;
    }
    if (outcome.code === 4000) {
      log("replaced: another connection for this camera took over the tunnel; exiting");
      return 1;
    }
    if (outcome.opened) {
      backoff = 1000;
      log(`tunnel closed (${outcome.code}${outcome.reason ? ` ${outcome.reason}` : ""})`);
    } else if (outcome.refused) {
      log(`handshake refused: ${outcome.refused} ${outcome.detail}`);
    } else {
      log(`cannot connect: ${outcome.error ?? `closed ${outcome.code}`}`);
    }
    const wait = Math.max(backoff, outcome.retryAfter * 1000 || 0);
    log(`reconnecting in ${Math.round(wait / 1000)} s`);
    await sleep(wait);
    if (stopping) return 0;
    backoff = Math.min(backoff * 2, 30_000);
  }
}

// ---- Pairing --------------------------------------------------------------------------------

const drawCode = () => Array.from({ length: 6 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join("");
const shellQuote = (text) => `'${text.replaceAll("'", "'\\''")}'`;

async function registerCode() {
  for (;;) {
    const code = drawCode();
    let response;
    try {
      response = await fetch(`${API}/pairing/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code, fingerprint: state.fingerprint, public_key_jwk: publicJwk, key_id: state.key_id }),
      });
    } catch (error) {
      // A device boots before its network or the server is up: it keeps trying.
      log(`cannot reach ${BASE} (${error.cause?.code ?? error.message}); retrying in 5 s`);
      await sleep(5000);
      continue;
    }
    if (response.status === 201) return { code, expiresAt: (await response.json()).expires_at };
    if (response.status === 409) continue; // Someone else's live code: draw again.
    const detail = await problemDetail(response);
    if (response.status === 429 || response.status >= 500) {
      log(`register -> ${response.status} ${detail}; retrying`);
      await sleep((Number(response.headers.get("retry-after")) || 5) * 1000);
      continue;
    }
    throw new Error(`registering a pairing code failed: ${response.status} ${detail}`);
  }
}

function showCode(code, expiresAt) {
  const claim = JSON.stringify({ code, camera_name: options.name });
  console.log(`
  ┌──────────────────────────────┐
  │   Pairing code:   ${code}     │
  └──────────────────────────────┘
  Valid until ${expiresAt}. Claim it as the camera's owner:

    curl -s ${BASE}/v1/plugins/rpi-cam/pairing/claim -H 'Authorization: Bearer <access_token>' \\
      -H 'content-type: application/json' -d ${shellQuote(claim)}
`);
}

async function pair() {
  for (;;) {
    const { code, expiresAt } = await registerCode();
    showCode(code, expiresAt);
    log(`waiting for the claim of ${code}`);
    for (;;) {
      await sleep(2000);
      if (stopping) return false;
      let response;
      try {
        response = await fetch(`${API}/pairing/poll?${new URLSearchParams({ code, fingerprint: state.fingerprint })}`);
      } catch (error) {
        log(`poll failed: ${error.cause?.code ?? error.message}`);
        continue;
      }
      if (response.status === 404) {
        log(`code ${code} expired; drawing a new one`);
        break;
      }
      if (response.status !== 200) {
        const detail = await problemDetail(response);
        if (response.status === 403) throw new Error(`poll refused: ${detail}`);
        log(`poll -> ${response.status} ${detail}`);
        continue;
      }
      const body = await response.json();
      if (body.status !== "paired") continue;
      // The server hands this out once: lose it and the pairing is gone.
      Object.assign(state, { camera_id: body.camera_id, ws_url: body.ws_url, base: BASE });
      saveState(state);
      log(`paired: camera ${body.camera_id}`);
      return true;
    }
  }
}

// ---- Main -----------------------------------------------------------------------------------

async function unpairSelf() {
  if (!state.camera_id) {
    log("not paired: nothing to unpair");
    return 0;
  }
  const response = await deviceFetch("/self", { method: "DELETE" });
  if (response.status === 204) {
    log(`unpaired: camera ${state.camera_id} deleted on the server`);
  } else if (response.status === 401) {
    log(`the server no longer knows camera ${state.camera_id} (401): forgetting it here`);
  } else {
    console.error(`Unpairing failed: ${response.status} ${await problemDetail(response)}`);
    return 1;
  }
  forgetPairing(state);
  return 0;
}

process.on("SIGINT", () => {
  if (stopping) process.exit(130);
  stopping = true;
  stopPreview();
  log("stopping");
  if (tunnel && tunnel.readyState === WebSocket.OPEN) {
    tunnel.close(1000, "device shutting down");
    setTimeout(() => process.exit(0), 1000).unref();
  } else {
    tunnel?.terminate();
    process.exit(0);
  }
});

try {
  if (options.unpair) process.exit(await unpairSelf());
  if (!state.camera_id) {
    if (!(await pair())) process.exit(0);
  } else {
    log(`already paired as camera ${state.camera_id}`);
  }
  const status = await keepTunnel();
  stopPreview();
  process.exit(status);
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
