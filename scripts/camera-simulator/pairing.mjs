// Pairing from the device's side: register a code, show it, poll until the owner claims it.
// Unpairing from this side deletes the camera on the server too.
import { randomInt } from "node:crypto";
import { log, sleep } from "./log.mjs";
import { deviceFetch, forgetPairing, problemDetail, saveState } from "./state.mjs";

const CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

const drawCode = () => Array.from({ length: 6 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join("");
const shellQuote = (text) => `'${text.replaceAll("'", "'\\''")}'`;

async function registerCode(device) {
  const { state } = device;
  for (;;) {
    const code = drawCode();
    let response;
    try {
      response = await fetch(`${device.api}/pairing/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code, fingerprint: state.fingerprint, public_key_jwk: device.publicJwk, key_id: state.key_id }),
      });
    } catch (error) {
      // A device boots before its network or the server is up: it keeps trying.
      log(`cannot reach ${device.base} (${error.cause?.code ?? error.message}); retrying in 5 s`);
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

function showCode(device, name, code, expiresAt) {
  const claim = JSON.stringify({ code, camera_name: name });
  console.log(`
  ┌──────────────────────────────┐
  │   Pairing code:   ${code}     │
  └──────────────────────────────┘
  Valid until ${expiresAt}. Claim it as the camera's owner:

    curl -s ${device.base}/v1/plugins/rpi-cam/pairing/claim -H 'Authorization: Bearer <access_token>' \\
      -H 'content-type: application/json' -d ${shellQuote(claim)}
`);
}

/** Resolves true once paired, false when stopped while waiting for the claim. */
export async function pair({ device, session, name }) {
  const { state } = device;
  for (;;) {
    const { code, expiresAt } = await registerCode(device);
    showCode(device, name, code, expiresAt);
    log(`waiting for the claim of ${code}`);
    for (;;) {
      await sleep(2000);
      if (session.stopping) return false;
      let response;
      try {
        response = await fetch(`${device.api}/pairing/poll?${new URLSearchParams({ code, fingerprint: state.fingerprint })}`);
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
      Object.assign(state, { camera_id: body.camera_id, ws_url: body.ws_url, base: device.base });
      saveState(device.stateFile, state);
      log(`paired: camera ${body.camera_id}`);
      return true;
    }
  }
}

/** Resolves with the process exit status. */
export async function unpairSelf(device) {
  const { state } = device;
  if (!state.camera_id) {
    log("not paired: nothing to unpair");
    return 0;
  }
  const response = await deviceFetch(device, "/self", { method: "DELETE" });
  if (response.status === 204) {
    log(`unpaired: camera ${state.camera_id} deleted on the server`);
  } else if (response.status === 401) {
    log(`the server no longer knows camera ${state.camera_id} (401): forgetting it here`);
  } else {
    console.error(`Unpairing failed: ${response.status} ${await problemDetail(response)}`);
    return 1;
  }
  forgetPairing(device);
  return 0;
}
