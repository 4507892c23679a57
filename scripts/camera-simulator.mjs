// Plays a Raspberry Pi camera against a local API, so the rpi-cam plugin can be tried and
// debugged without the hardware: it pairs with a code, keeps the relay tunnel open, answers the
// relayed commands of the device contract and uploads its (generated) pictures itself.
//
//   node scripts/camera-simulator.mjs [--base http://localhost:8787] [--state file] [--name "..."] [--unpair]
//
// Everything the device must remember (its key pair, its camera id, its local API key) lives in
// one JSON state file, like the real device's. It is a private key: keep it out of version control.
import { resolve } from "node:path";
import WebSocket from "ws";
import { createCamera, createCommands, stopPreview } from "./camera-simulator/commands.mjs";
import { log } from "./camera-simulator/log.mjs";
import { pair, unpairSelf } from "./camera-simulator/pairing.mjs";
import { openDevice } from "./camera-simulator/state.mjs";
import { keepTunnel } from "./camera-simulator/tunnel.mjs";
import { readOptions } from "./cli-options.mjs";

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

const options = readOptions(USAGE, {
  base: { type: "string", default: "http://localhost:8787" },
  state: { type: "string", default: ".camera-simulator.json" },
  name: { type: "string", default: "Simulated camera" },
  unpair: { type: "boolean", default: false },
});

const base = options.base.replace(/\/+$/, "");
const device = await openDevice({ base, stateFile: resolve(options.state) });
const { state } = device;

if (state.camera_id && state.base && state.base !== base) {
  console.error(`This state is paired with ${state.base}; run with --base ${state.base} or another --state.`);
  process.exit(2);
}

const camera = createCamera();
// Shared by pairing, tunnel and commands: Ctrl-C must reach whichever loop is running, and an
// unpairing command must change how the tunnel's next close is read.
const session = { stopping: false, unpairedByServer: false, tunnel: null };
const answer = createCommands({ device, camera, session });

process.on("SIGINT", () => {
  if (session.stopping) process.exit(130);
  session.stopping = true;
  stopPreview(camera);
  log("stopping");
  const { tunnel } = session;
  if (tunnel && tunnel.readyState === WebSocket.OPEN) {
    tunnel.close(1000, "device shutting down");
    setTimeout(() => process.exit(0), 1000).unref();
  } else {
    tunnel?.terminate();
    process.exit(0);
  }
});

try {
  if (options.unpair) process.exit(await unpairSelf(device));
  if (!state.camera_id) {
    if (!(await pair({ device, session, name: options.name }))) process.exit(0);
  } else {
    log(`already paired as camera ${state.camera_id}`);
  }
  const status = await keepTunnel({ device, session, answer });
  stopPreview(camera);
  process.exit(status);
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
