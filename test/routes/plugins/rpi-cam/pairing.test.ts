import { env } from "cloudflare:workers";
import { exportJWK } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, bearerLogin, postJson, registerUser, verifiedUser } from "../../../support/accounts";
import { claim, deviceKeys, type DeviceKeys, pairingCode, poll, registerPairing } from "../../../support/camera";
import { api, expectProblem } from "../../../support/http";
import { expectRateLimited, expectRefused, freshIp, limitedApi } from "../../../support/limits";

// Camera pairing through HTTP (decisions.md, Camera plugin): the device registers a 6-character
// code with its public key for 10 minutes, the owner claims the code (a verified account; the
// claim creates the camera, exactly once), and the device polls until it learns, once, its camera
// id and tunnel URL. Claims are limited per client IP and, always, per code. The device's side
// (register, poll) and the tunnel stay out of the OpenAPI schema.

type Camera = { id: string; name: string; description: string | null; owner_id: number; last_seen_at: string | null; created_at: string; updated_at: string };
type Paired = { status: "paired"; camera_id: string; ws_url: string; auth_scheme: string; key_id: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const REGISTER = "/v1/plugins/rpi-cam/pairing/register";
const CLAIM = "/v1/plugins/rpi-cam/pairing/claim";

let owner: { id: number; token: string };
let other: { id: number; token: string };

beforeAll(async () => {
  const [a, b] = [await verifiedUser("pairowner"), await verifiedUser("pairother")];
  owner = { id: a.id, token: a.tokens.access_token };
  other = { id: b.id, token: b.tokens.access_token };
});

/** A device with keys and a fresh code, registered (201). */
async function registered(): Promise<{ keys: DeviceKeys; code: string }> {
  const keys = await deviceKeys();
  const code = pairingCode();
  const response = await registerPairing(keys, code);
  expect(response.status, await response.clone().text()).toBe(201);
  return { keys, code };
}

/** Moves a registration's end into the past, as ten minutes would. */
async function expire(code: string): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const result = await env.DB.prepare("UPDATE camera_pairings SET expires_at = ? WHERE code = ?").bind(now - 1, code).run();
  expect(result.meta.changes).toBe(1);
}

/** The pointers of a 422 validation problem. */
async function pointers(response: Response): Promise<string[]> {
  const problem = await expectProblem(response, 422, "VALIDATION_FAILED");
  return (problem.errors ?? []).map((error) => error.pointer);
}

/** A code that is `code` with one character replaced by `character`. */
const withCharacter = (code: string, character: string) => `${character}${code.slice(1)}`;

describe("registering a code", () => {
  it("answers 201 with the code and when it expires, ten minutes on", async () => {
    const keys = await deviceKeys();
    const code = pairingCode();
    const response = await registerPairing(keys, code);
    expect(response.status, await response.clone().text()).toBe(201);
    const body = (await response.json()) as { code: string; expires_at: string };
    expect(Object.keys(body).sort()).toEqual(["code", "expires_at"]);
    expect(body.code).toBe(code);
    expect(body.expires_at).toMatch(ISO_SECONDS);
    expect(Math.abs(Date.parse(body.expires_at) - (Date.now() + 600_000))).toBeLessThan(10_000);
  });

  it("refuses a code that is live under another registration with 409 PAIRING_CODE_IN_USE", async () => {
    const { keys, code } = await registered();
    await expectProblem(await registerPairing(await deviceKeys(), code), 409, "PAIRING_CODE_IN_USE");
    // Not even the same device may register it again while it lives.
    await expectProblem(await registerPairing(keys, code), 409, "PAIRING_CODE_IN_USE");
    // The first registration is untouched.
    expect(await (await poll(code, keys.fingerprint)).json()).toEqual({ status: "waiting" });
  });

  it("lets another device take over an expired code", async () => {
    const { keys: first, code } = await registered();
    await expire(code);
    const second = await deviceKeys();
    const response = await registerPairing(second, code);
    expect(response.status, await response.clone().text()).toBe(201);
    expect(await (await poll(code, second.fingerprint)).json()).toEqual({ status: "waiting" });
    await expectProblem(await poll(code, first.fingerprint), 403, "PAIRING_FINGERPRINT_MISMATCH");
  });

  it("accepts a lowercase code and keeps it in upper case", async () => {
    const keys = await deviceKeys();
    const code = pairingCode();
    const response = await registerPairing(keys, code.toLowerCase());
    expect(response.status, await response.clone().text()).toBe(201);
    expect(((await response.json()) as { code: string }).code).toBe(code);
    // The same code, in either case, is the one registration.
    await expectProblem(await registerPairing(await deviceKeys(), code), 409, "PAIRING_CODE_IN_USE");
    expect(await (await poll(code.toLowerCase(), keys.fingerprint)).json()).toEqual({ status: "waiting" });
    expect((await claim(owner.token, code.toLowerCase())).status).toBe(201);
    expect(((await (await poll(code, keys.fingerprint)).json()) as Paired).status).toBe("paired");
  });

  it("refuses codes off the alphabet or of another length with 422 at /code", async () => {
    const keys = await deviceKeys();
    const code = pairingCode();
    for (const bad of ["0", "O", "1", "I", "-", "é", " "].map((c) => withCharacter(code, c)).concat([code.slice(1), `${code}A`, "", "ABC DE"])) {
      expect(await pointers(await registerPairing(keys, bad)), JSON.stringify(bad)).toContain("/code");
    }
    expect(await pointers(await registerPairing(keys, 123456 as unknown as string))).toContain("/code");
  });

  it("refuses a private key (a `d` member) with 422", async () => {
    const keys = await deviceKeys();
    const privateJwk = await exportJWK(keys.privateKey);
    expect(privateJwk.d).toBeDefined();
    expect(await pointers(await registerPairing(keys, pairingCode(), { public_key_jwk: privateJwk }))).toEqual(["/public_key_jwk/d"]);
  });

  it("refuses another key type or curve with 422", async () => {
    const keys = await deviceKeys();
    for (const jwk of [
      { ...keys.publicJwk, crv: "P-384" },
      { ...keys.publicJwk, crv: "secp256k1" },
      { ...keys.publicJwk, kty: "RSA" },
      { kty: "OKP", crv: "Ed25519", x: keys.publicJwk.x },
      { ...keys.publicJwk, alg: "ES384" },
    ]) {
      const found = await pointers(await registerPairing(keys, pairingCode(), { public_key_jwk: jwk }));
      expect(found.some((pointer) => pointer.startsWith("/public_key_jwk")), JSON.stringify(jwk)).toBe(true);
    }
  });

  it("refuses coordinates of the right length that are not a point on P-256 with 422 at /public_key_jwk", async () => {
    const keys = await deviceKeys();
    const y = keys.publicJwk.y!;
    const offCurve = { ...keys.publicJwk, y: `${y[0] === "A" ? "B" : "A"}${y.slice(1)}` };
    expect(offCurve.y).toHaveLength(43);
    expect(await pointers(await registerPairing(keys, pairingCode(), { public_key_jwk: offCurve }))).toEqual(["/public_key_jwk"]);
    const zero = { ...keys.publicJwk, x: "A".repeat(43), y: "A".repeat(43) };
    expect(await pointers(await registerPairing(keys, pairingCode(), { public_key_jwk: zero }))).toEqual(["/public_key_jwk"]);
  });

  it("refuses coordinates that are not 43 base64url characters with 422", async () => {
    const keys = await deviceKeys();
    for (const jwk of [
      { ...keys.publicJwk, x: keys.publicJwk.x!.slice(1) },
      { ...keys.publicJwk, y: `${keys.publicJwk.y}A` },
      { ...keys.publicJwk, x: `+${keys.publicJwk.x!.slice(1)}` },
    ]) {
      const found = await pointers(await registerPairing(keys, pairingCode(), { public_key_jwk: jwk }));
      expect(found.some((pointer) => pointer.startsWith("/public_key_jwk"))).toBe(true);
    }
  });

  it("refuses unknown members, and missing or malformed ones, with 422", async () => {
    const keys = await deviceKeys();
    expect(await pointers(await registerPairing(keys, pairingCode(), { camera_id: crypto.randomUUID() }))).toHaveLength(1);
    expect(await pointers(await registerPairing(keys, pairingCode(), { fingerprint: "short" }))).toContain("/fingerprint");
    expect(await pointers(await registerPairing(keys, pairingCode(), { key_id: "has space" }))).toContain("/key_id");
    expect(await pointers(await registerPairing(keys, pairingCode(), { key_id: "k".repeat(65) }))).toContain("/key_id");
    expect(await pointers(await postJson(REGISTER, { code: pairingCode(), fingerprint: keys.fingerprint, key_id: keys.keyId }))).toContain(
      "/public_key_jwk",
    );
  });
});

describe("claiming a code", () => {
  it("is 401 for an anonymous caller", async () => {
    const { code } = await registered();
    const response = await postJson(CLAIM, { code, camera_name: "Anonymous camera" });
    await expectProblem(response, 401, "AUTHENTICATION_REQUIRED");
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    // The code stays claimable.
    expect((await claim(owner.token, code)).status).toBe(201);
  });

  it("is 403 EMAIL_NOT_VERIFIED for an unverified account", async () => {
    const user = await registerUser();
    const { access_token } = await bearerLogin(user);
    const { code } = await registered();
    await expectProblem(await claim(access_token, code), 403, "EMAIL_NOT_VERIFIED");
    // The code stays claimable.
    expect((await claim(owner.token, code)).status).toBe(201);
  });

  it("is 404 PAIRING_CODE_NOT_FOUND for a code never registered", async () => {
    await expectProblem(await claim(owner.token, pairingCode()), 404, "PAIRING_CODE_NOT_FOUND");
  });

  it("is 404 PAIRING_CODE_NOT_FOUND for an expired code", async () => {
    const { code } = await registered();
    await expire(code);
    await expectProblem(await claim(owner.token, code), 404, "PAIRING_CODE_NOT_FOUND");
  });

  it("answers 201 with the new camera and its Location", async () => {
    const { code } = await registered();
    const response = await postJson(CLAIM, { code, camera_name: "  Bench camera  ", description: "Above the bench" }, bearer(owner.token));
    expect(response.status, await response.clone().text()).toBe(201);
    const camera = (await response.json()) as Camera;
    expect(Object.keys(camera).sort()).toEqual(["created_at", "description", "id", "last_seen_at", "name", "owner_id", "updated_at"]);
    expect(camera.id).toMatch(UUID);
    expect(camera).toMatchObject({ name: "Bench camera", description: "Above the bench", owner_id: owner.id, last_seen_at: null });
    expect(camera.created_at).toMatch(ISO_SECONDS);
    expect(camera.updated_at).toBe(camera.created_at);
    expect(Math.abs(Date.parse(camera.created_at) - Date.now())).toBeLessThan(60_000);
    expect(response.headers.get("location")).toBe(`/v1/plugins/rpi-cam/cameras/${camera.id}`);

    const read = await api(response.headers.get("location")!, { headers: bearer(owner.token) });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject(camera);
  });

  it("gives a null description when none is sent", async () => {
    const { code } = await registered();
    const response = await claim(owner.token, code, "No description");
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ name: "No description", description: null });
  });

  it("refuses bad claim bodies with 422", async () => {
    const { code } = await registered();
    expect(await pointers(await postJson(CLAIM, { code, camera_name: "" }, bearer(owner.token)))).toContain("/camera_name");
    expect(await pointers(await postJson(CLAIM, { code, camera_name: "x".repeat(101) }, bearer(owner.token)))).toContain("/camera_name");
    expect(await pointers(await postJson(CLAIM, { code: withCharacter(code, "0"), camera_name: "Cam" }, bearer(owner.token)))).toContain("/code");
    expect(await pointers(await postJson(CLAIM, { code, camera_name: "Cam", owner_id: other.id }, bearer(owner.token)))).toHaveLength(1);
    // None of them used up the code.
    expect((await claim(owner.token, code)).status).toBe(201);
  });

  it("is 409 PAIRING_CODE_ALREADY_CLAIMED the second time, by anyone", async () => {
    const { code } = await registered();
    expect((await claim(owner.token, code)).status).toBe(201);
    await expectProblem(await claim(owner.token, code), 409, "PAIRING_CODE_ALREADY_CLAIMED");
    await expectProblem(await claim(other.token, code), 409, "PAIRING_CODE_ALREADY_CLAIMED");
  });

  it("creates exactly one camera when two claims race", async () => {
    const { code } = await registered();
    const responses = await Promise.all([claim(owner.token, code, "Race A"), claim(other.token, code, "Race B")]);
    expect(responses.map((response) => response.status).sort()).toEqual([201, 409]);
    const loser = responses.find((response) => response.status === 409)!;
    await expectProblem(loser, 409, "PAIRING_CODE_ALREADY_CLAIMED");
    const winner = (await responses.find((response) => response.status === 201)!.json()) as Camera;
    const { results } = await env.DB.prepare("SELECT id FROM cameras WHERE name IN ('Race A', 'Race B')").all<{ id: string }>();
    expect(results).toEqual([{ id: winner.id }]);
  });
});

describe("polling", () => {
  it("answers waiting until the code is claimed, never cached", async () => {
    const { keys, code } = await registered();
    const response = await poll(code, keys.fingerprint);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({ status: "waiting" });
    expect(await (await poll(code, keys.fingerprint)).json()).toEqual({ status: "waiting" });
  });

  it("is 403 PAIRING_FINGERPRINT_MISMATCH for another fingerprint, before and after the claim", async () => {
    const { keys, code } = await registered();
    const stranger = await deviceKeys();
    await expectProblem(await poll(code, stranger.fingerprint), 403, "PAIRING_FINGERPRINT_MISMATCH");
    expect((await claim(owner.token, code)).status).toBe(201);
    await expectProblem(await poll(code, stranger.fingerprint), 403, "PAIRING_FINGERPRINT_MISMATCH");
    // The stranger's tries did not take the pairing away from the device.
    expect(((await (await poll(code, keys.fingerprint)).json()) as Paired).status).toBe("paired");
  });

  it("is 404 PAIRING_CODE_NOT_FOUND for an unknown or expired code", async () => {
    const keys = await deviceKeys();
    await expectProblem(await poll(pairingCode(), keys.fingerprint), 404, "PAIRING_CODE_NOT_FOUND");
    const { keys: device, code } = await registered();
    await expire(code);
    await expectProblem(await poll(code, device.fingerprint), 404, "PAIRING_CODE_NOT_FOUND");
  });

  it("hands over the camera once claimed, exactly once", async () => {
    const { keys, code } = await registered();
    const claimed = await claim(owner.token, code);
    expect(claimed.status).toBe(201);
    const camera = (await claimed.json()) as Camera;

    const response = await poll(code, keys.fingerprint);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = (await response.json()) as Paired;
    expect(body).toEqual({
      status: "paired",
      camera_id: camera.id,
      ws_url: `ws://localhost/v1/plugins/rpi-cam/ws/connect?camera_id=${camera.id}`,
      auth_scheme: "device_assertion",
      key_id: keys.keyId,
    });

    await expectProblem(await poll(code, keys.fingerprint), 404, "PAIRING_CODE_NOT_FOUND");
    // Nor can the code be claimed again once handed over.
    await expectProblem(await claim(other.token, code), 404, "PAIRING_CODE_NOT_FOUND");
  });

  it("hands over the camera to only one of two polls that race", async () => {
    const { keys, code } = await registered();
    expect((await claim(owner.token, code)).status).toBe(201);
    const responses = await Promise.all([poll(code, keys.fingerprint), poll(code, keys.fingerprint)]);
    expect(responses.map((response) => response.status).sort()).toEqual([200, 404]);
    const paired = responses.find((response) => response.status === 200)!;
    expect(((await paired.json()) as Paired).status).toBe("paired");
    await expectProblem(responses.find((response) => response.status === 404)!, 404, "PAIRING_CODE_NOT_FOUND");
  });

  it("refuses a malformed query with 422", async () => {
    const keys = await deviceKeys();
    expect((await api(`/v1/plugins/rpi-cam/pairing/poll?code=${pairingCode()}`)).status).toBe(422);
    expect((await api(`/v1/plugins/rpi-cam/pairing/poll?fingerprint=${encodeURIComponent(keys.fingerprint)}`)).status).toBe(422);
    expect((await poll("O0I1AB", keys.fingerprint)).status).toBe(422);
  });
});

describe("claim limits", () => {
  it("refuses the sixth claim attempt on one code within ten minutes, whoever makes it", async () => {
    const { code } = await registered();
    const third = (await verifiedUser("pairthird")).tokens.access_token;
    expect((await claim(owner.token, code)).status).toBe(201);
    for (const token of [other.token, owner.token, other.token, owner.token]) {
      await expectProblem(await claim(token, code), 409, "PAIRING_CODE_ALREADY_CLAIMED");
    }
    // Counted per code even with the request-rate limiters off (the suites run with them off).
    await expectRateLimited(await claim(third, code), `"pairing-claim-code";q=5;w=600`);
    // Another code is not affected.
    const fresh = await registered();
    expect((await claim(third, fresh.code)).status).toBe(201);
  });

  it("counts attempts on unknown codes too", async () => {
    const code = pairingCode();
    for (let i = 0; i < 5; i++) await expectProblem(await claim(i % 2 === 0 ? owner.token : other.token, code), 404, "PAIRING_CODE_NOT_FOUND");
    await expectProblem(await claim(owner.token, code), 429, "RATE_LIMITED");
  });

  it("refuses the eleventh claim in a minute from one client IP", async () => {
    const ip = freshIp();
    const send = (from: string) =>
      limitedApi(from, CLAIM, {
        method: "POST",
        headers: { "content-type": "application/json", ...bearer(owner.token) },
        body: JSON.stringify({ code: pairingCode(), camera_name: "Guessed" }),
      });
    for (let i = 0; i < 10; i++) await expectProblem(await send(ip), 404, "PAIRING_CODE_NOT_FOUND");
    await expectRefused(await send(ip), "pairing-claim-ip", 10);
    // Another address is not held up.
    await expectProblem(await send(freshIp()), 404, "PAIRING_CODE_NOT_FOUND");
  });
});

describe("the OpenAPI schema", () => {
  it("lists the owner's routes but not the device's side or the tunnel", async () => {
    const response = await api("/v1/openapi.json");
    expect(response.status).toBe(200);
    const paths = Object.keys(((await response.json()) as { paths: Record<string, unknown> }).paths);
    expect(paths).toContain("/v1/plugins/rpi-cam/pairing/claim");
    expect(paths).toContain("/v1/plugins/rpi-cam/cameras");
    const hidden = paths.filter((path) => /\/pairing\/(register|poll)|\/ws\/|\/rpi-cam\/device\//.test(path));
    expect(hidden).toEqual([]);
    expect(paths.filter((path) => path.includes("rpi-cam")).every((path) => path.startsWith("/v1/plugins/rpi-cam/pairing/claim") || path.startsWith("/v1/plugins/rpi-cam/cameras"))).toBe(true);
  });
});
