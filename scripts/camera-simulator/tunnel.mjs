// The relay tunnel: one WebSocket at a time, reopened with backoff until the server or the
// owner ends the pairing.
import WebSocket from "ws";
import { log, sleep } from "./log.mjs";
import { assertion, forgetPairing } from "./state.mjs";

const MAX_TEXT_FRAME = 64 * 1024;
const MAX_BINARY_FRAME = 10 * 1024 * 1024;

async function handleRequest(socket, frame, answer) {
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
async function runTunnel({ device, session, answer }) {
  const token = await assertion(device);
  return new Promise((settleTunnel) => {
    let opened = false;
    let settled = false;
    const settle = (outcome) => {
      if (!settled) {
        settled = true;
        session.tunnel = null;
        settleTunnel(outcome);
      }
    };
    // No Origin header: the server refuses tunnels that look like they come from a browser.
    const socket = new WebSocket(device.state.ws_url, {
      headers: { Authorization: `Bearer ${token}` },
      perMessageDeflate: false,
      handshakeTimeout: 15_000,
    });
    session.tunnel = socket;

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
      log(`connected: tunnel open for camera ${device.state.camera_id}`);
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
      else if (frame?.type === "request" && typeof frame.id === "string") void handleRequest(socket, frame, answer);
    });
    socket.on("error", (error) => {
      if (!opened) settle({ error: error.message });
    });
    socket.on("close", (code, reason) => settle({ opened, code, reason: reason.toString() }));
  });
}

/** Resolves with the process exit status once the tunnel is over for good. */
export async function keepTunnel({ device, session, answer }) {
  let backoff = 1000;
  for (;;) {
    const outcome = await runTunnel({ device, session, answer });
    if (session.stopping) return 0;
    if (outcome.refused === 401) {
      console.error(
        `The server refused this camera's assertion (401: ${outcome.detail}).\n` +
          "The camera was deleted or its key revoked. Run with --unpair to forget it here, then start again to pair anew.",
      );
      return 1;
    }
    if (outcome.code === 4001 || session.unpairedByServer) {
      if (device.state.camera_id) forgetPairing(device);
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
    if (session.stopping) return 0;
    backoff = Math.min(backoff * 2, 30_000);
  }
}
