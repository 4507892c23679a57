import { env } from "cloudflare:workers";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { expect } from "vitest";
import { bearer, postJson } from "./accounts";
import { api, expectProblem } from "./http";

const ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/** A device's key pair, key id and fingerprint, as a camera keeps them. */
export interface DeviceKeys {
  privateKey: CryptoKey;
  publicJwk: JWK;
  keyId: string;
  fingerprint: string;
}

/** A paired camera as the test device knows it. */
export interface TestCamera extends DeviceKeys {
  id: string;
  wsUrl: string;
}

/** A pairing code no other test uses (random over the alphabet). */
export function pairingCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return Array.from(bytes, (b) => ALPHABET[b % ALPHABET.length]).join("");
}

export async function deviceKeys(): Promise<DeviceKeys> {
  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { privateKey, publicJwk, keyId: `key-${crypto.randomUUID().slice(0, 8)}`, fingerprint: await calculateJwkThumbprint(publicJwk) };
}

export function registerPairing(keys: DeviceKeys, code: string, extra: Record<string, unknown> = {}): Promise<Response> {
  return postJson("/v1/plugins/rpi-cam/pairing/register", {
    code,
    fingerprint: keys.fingerprint,
    public_key_jwk: keys.publicJwk,
    key_id: keys.keyId,
    ...extra,
  });
}

export function claim(token: string, code: string, name = "Bench camera"): Promise<Response> {
  return postJson("/v1/plugins/rpi-cam/pairing/claim", { code, camera_name: name }, bearer(token));
}

export function poll(code: string, fingerprint: string): Promise<Response> {
  return api(`/v1/plugins/rpi-cam/pairing/poll?code=${code}&fingerprint=${encodeURIComponent(fingerprint)}`);
}

/** A device with keys and a fresh code, registered (201). */
export async function registeredPairing(): Promise<{ keys: DeviceKeys; code: string }> {
  const keys = await deviceKeys();
  const code = pairingCode();
  const response = await registerPairing(keys, code);
  expect(response.status, await response.clone().text()).toBe(201);
  return { keys, code };
}

/** Moves a registration's end into the past, as ten minutes would. */
export async function expirePairing(code: string): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const result = await env.DB.prepare("UPDATE camera_pairings SET expires_at = ? WHERE code = ?")
    .bind(now - 1, code)
    .run();
  expect(result.meta.changes).toBe(1);
}

/** A code that is `code` with one character replaced by `character`. */
export const withCharacter = (code: string, character: string) => `${character}${code.slice(1)}`;

/** The pointers of a 422 validation problem. */
export async function validationPointers(response: Response): Promise<string[]> {
  const problem = await expectProblem(response, 422, "VALIDATION_FAILED");
  return (problem.errors ?? []).map((error) => error.pointer);
}

/** Registers, claims as `token`'s user and polls: a camera ready to connect. */
export async function pairCamera(token: string, name = "Bench camera"): Promise<TestCamera> {
  const keys = await deviceKeys();
  const code = pairingCode();
  expect((await registerPairing(keys, code)).status).toBe(201);
  const claimed = await claim(token, code, name);
  expect(claimed.status, await claimed.clone().text()).toBe(201);
  const polled = await poll(code, keys.fingerprint);
  expect(polled.status).toBe(200);
  const body = (await polled.json()) as { status: string; camera_id: string; ws_url: string };
  expect(body.status).toBe("paired");
  return { ...keys, id: body.camera_id, wsUrl: body.ws_url };
}

export interface AssertionOptions {
  /** Claims to change (undefined removes one). */
  claims?: Record<string, unknown>;
  header?: Record<string, unknown>;
  /** Sign with another key. */
  key?: CryptoKey;
  lifetime?: number;
}

/** A device assertion for `camera`, valid unless the options spoil it. */
export async function assertion(camera: Pick<TestCamera, "id" | "keyId" | "privateKey">, options: AssertionOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {
    iss: `camera:${camera.id}`,
    sub: `camera:${camera.id}`,
    aud: "relab-rpi-cam-relay",
    iat: now,
    nbf: now,
    exp: now + (options.lifetime ?? 60),
    jti: crypto.randomUUID(),
    ...options.claims,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "ES256", kid: camera.keyId, typ: "JWT", ...options.header } as { alg: string })
    .sign(options.key ?? camera.privateKey);
}

/** The tunnel handshake as a device sends it; `headers` are added (an Origin, say). */
export async function handshake(camera: TestCamera, token?: string, headers: Record<string, string> = {}): Promise<Response> {
  const url = new URL(camera.wsUrl);
  return api(`${url.pathname}${url.search}`, {
    headers: { Upgrade: "websocket", Authorization: `Bearer ${token ?? (await assertion(camera))}`, ...headers },
  });
}

/** The handshake of `camera` with exactly these headers (an Upgrade unless `upgrade` is false). */
export function rawHandshake(camera: Pick<TestCamera, "wsUrl">, headers: Record<string, string>, upgrade = true): Promise<Response> {
  const url = new URL(camera.wsUrl);
  return api(`${url.pathname}${url.search}`, { headers: upgrade ? { Upgrade: "websocket", ...headers } : headers });
}

/** Asserts the handshake was accepted, then closes the tunnel. */
export async function expectAccepted(response: Response): Promise<void> {
  expect(response.status, response.status === 101 ? "" : await response.text()).toBe(101);
  const socket = response.webSocket!;
  expect(socket).toBeTruthy();
  socket.accept();
  socket.close(1000, "test done");
}

/** How bad device assertions are refused: every refusal says the same. */
export interface AssertionRefusal {
  /** Asserts the one refusal of every bad assertion: 401, the same code and detail, and a challenge. */
  expectRefusedAssertion(response: Response): Promise<void>;
  /** The handshake of `target` (by default the camera the refusal was learnt from) with `token` must be refused. */
  refused(token: string, target?: TestCamera): Promise<void>;
}

/** Learns the refusal from `camera`'s handshake without credentials (401 DEVICE_ASSERTION_INVALID, with a detail). */
export async function assertionRefusal(camera: TestCamera): Promise<AssertionRefusal> {
  const refusalDetail = (await expectProblem(await rawHandshake(camera, {}), 401, "DEVICE_ASSERTION_INVALID")).detail;
  expect(refusalDetail.length).toBeGreaterThan(0);
  const expectRefusedAssertion = async (response: Response): Promise<void> => {
    const problem = await expectProblem(response, 401, "DEVICE_ASSERTION_INVALID");
    expect(problem.detail).toBe(refusalDetail);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /);
  };
  const refused = async (token: string, target: TestCamera = camera): Promise<void> =>
    expectRefusedAssertion(await handshake(target, token));
  return { expectRefusedAssertion, refused };
}

/** The device's answer to one command. */
export interface DeviceAnswer {
  status: number;
  data?: unknown;
  contentType?: string;
  binary?: Uint8Array;
}

export interface RequestFrame {
  type: "request";
  id: string;
  method: string;
  path: string;
  params: Record<string, unknown>;
  body: unknown;
  headers: Record<string, string>;
}

/** An open tunnel as the test device holds it: every text frame received, and ways to wait for more. */
export interface TestTunnel {
  socket: WebSocket;
  frames: Array<Record<string, unknown>>;
  closed: Promise<{ code: number; reason: string }>;
  /** Waits for a text frame matching `test` (already received ones count). */
  next(test: (frame: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

/**
 * Opens the tunnel and, when `answer` is given, answers every command with it (a response frame,
 * then the binary frame when there is one), as a camera would; pings are answered with pongs.
 */
export async function openTunnel(
  camera: TestCamera,
  answer?: (request: RequestFrame) => DeviceAnswer | Promise<DeviceAnswer> | null,
): Promise<TestTunnel> {
  const response = await handshake(camera);
  expect(response.status, response.status === 101 ? "" : await response.text()).toBe(101);
  const socket = response.webSocket!;
  socket.accept();
  const frames: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  let closedWith: (value: { code: number; reason: string }) => void = () => {};
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (closedWith = resolve));
  socket.addEventListener("close", (event) => closedWith({ code: event.code, reason: event.reason }));
  const onFrame = async (event: MessageEvent) => {
    if (typeof event.data !== "string") return;
    const frame = JSON.parse(event.data) as Record<string, unknown>;
    frames.push(frame);
    for (const wake of waiters) wake();
    if (frame.type === "ping") socket.send('{"type":"pong"}');
    if (frame.type === "request" && answer) {
      const reply = await answer(frame as unknown as RequestFrame);
      if (!reply) return;
      socket.send(
        JSON.stringify({
          type: "response",
          id: frame.id,
          status: reply.status,
          content_type: reply.contentType ?? (reply.binary ? "application/octet-stream" : "application/json"),
          has_binary: reply.binary !== undefined,
          data: reply.data ?? null,
        }),
      );
      if (reply.binary) socket.send(reply.binary);
    }
  };
  socket.addEventListener("message", (event) => void onFrame(event));
  const next = (test: (frame: Record<string, unknown>) => boolean, timeoutMs = 5_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        const found = frames.find(test);
        if (!found) return false;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(frames)}`));
      }, timeoutMs);
      if (!check()) waiters.add(check);
    });
  return { socket, frames, closed, next };
}

/** The app's request to one camera route. */
export function cameraApi(token: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<Response> {
  const headers: Record<string, string> = bearer(token);
  if (init.body !== undefined) headers["content-type"] = "application/json";
  return api(`/v1/plugins/rpi-cam/cameras${path}`, {
    method: init.method ?? "GET",
    headers,
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
}
