// The state file and the key pair in it are the device's whole identity: every device request
// and every tunnel is signed with that key.

import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT } from "jose";
import { log } from "./log.mjs";

const AUDIENCE = "relab-rpi-cam-relay";

export function saveState(stateFile, state) {
  // Written whole and renamed into place, so a crash never leaves half a private key behind.
  const temporary = `${stateFile}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, stateFile);
}

async function loadState(stateFile) {
  if (existsSync(stateFile)) {
    log(`state: ${stateFile}`);
    return JSON.parse(readFileSync(stateFile, "utf8"));
  }
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const privateJwk = await exportJWK(privateKey);
  const state = {
    key_id: `sim-${randomBytes(4).toString("hex")}`,
    private_jwk: privateJwk,
    fingerprint: await calculateJwkThumbprint({ kty: "EC", crv: "P-256", x: privateJwk.x, y: privateJwk.y }),
    local_api_key: randomBytes(24).toString("base64url"),
  };
  saveState(stateFile, state);
  log(`new device key ${state.key_id}; state (holds the private key) written to ${stateFile}`);
  return state;
}

/** The device as every other module sees it: where it talks to, what it remembers, its key. */
export async function openDevice({ base, stateFile }) {
  const state = await loadState(stateFile);
  return {
    base,
    api: `${base}/v1/plugins/rpi-cam`,
    stateFile,
    state,
    signingKey: await importJWK(state.private_jwk, "ES256"),
    publicJwk: { kty: "EC", crv: "P-256", x: state.private_jwk.x, y: state.private_jwk.y },
  };
}

export function forgetPairing(device) {
  delete device.state.camera_id;
  delete device.state.ws_url;
  delete device.state.base;
  saveState(device.stateFile, device.state);
}

// A fresh short-lived token for every request: the server spends each jti once.
export async function assertion(device) {
  const subject = `camera:${device.state.camera_id}`;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid: device.state.key_id, typ: "JWT" })
    .setIssuer(subject)
    .setSubject(subject)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + 60)
    .setJti(randomUUID())
    .sign(device.signingKey);
}

export async function problemDetail(response) {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text);
    if (typeof body?.detail === "string") return body.detail;
  } catch {
    // Not JSON: the raw text says more than nothing.
  }
  return text.slice(0, 200) || response.statusText;
}

export async function deviceFetch(device, path, init = {}) {
  const headers = { ...init.headers, Authorization: `Bearer ${await assertion(device)}` };
  return fetch(`${device.api}/device/cameras/${device.state.camera_id}${path}`, { ...init, headers });
}
