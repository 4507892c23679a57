import { exportJWK } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { postJson, verifiedUser } from "../../../support/accounts";
import {
  claim,
  deviceKeys,
  expirePairing,
  pairingCode,
  poll,
  registeredPairing,
  registerPairing,
  validationPointers,
  withCharacter,
} from "../../../support/camera";
import { api, expectProblem } from "../../../support/http";

// Camera pairing through HTTP, the device's side (decisions.md, Camera plugin): the device
// registers a 6-character code with its public key for 10 minutes, then polls until it learns,
// once, its camera id and tunnel URL. The owner's claim, its limits and what the OpenAPI schema
// shows are in pairing-claim.test.ts.

type Paired = { status: "paired"; camera_id: string; ws_url: string; auth_scheme: string; key_id: string };

const ISO_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const REGISTER = "/v1/plugins/rpi-cam/pairing/register";

let owner: { id: number; token: string };
let other: { id: number; token: string };

beforeAll(async () => {
  const [a, b] = [await verifiedUser("pairowner"), await verifiedUser("pairother")];
  owner = { id: a.id, token: a.tokens.access_token };
  other = { id: b.id, token: b.tokens.access_token };
});

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
    const { keys, code } = await registeredPairing();
    await expectProblem(await registerPairing(await deviceKeys(), code), 409, "PAIRING_CODE_IN_USE");
    // Not even the same device may register it again while it lives.
    await expectProblem(await registerPairing(keys, code), 409, "PAIRING_CODE_IN_USE");
    // The first registration is untouched.
    expect(await (await poll(code, keys.fingerprint)).json()).toEqual({ status: "waiting" });
  });

  it("lets another device take over an expired code", async () => {
    const { keys: first, code } = await registeredPairing();
    await expirePairing(code);
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
    for (const bad of ["0", "O", "1", "I", "-", "é", " "]
      .map((c) => withCharacter(code, c))
      .concat([code.slice(1), `${code}A`, "", "ABC DE"])) {
      expect(await validationPointers(await registerPairing(keys, bad)), JSON.stringify(bad)).toContain("/code");
    }
    expect(await validationPointers(await registerPairing(keys, 123456 as unknown as string))).toContain("/code");
  });

  it("refuses a private key (a `d` member) with 422", async () => {
    const keys = await deviceKeys();
    const privateJwk = await exportJWK(keys.privateKey);
    expect(privateJwk.d).toBeDefined();
    expect(await validationPointers(await registerPairing(keys, pairingCode(), { public_key_jwk: privateJwk }))).toEqual([
      "/public_key_jwk/d",
    ]);
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
      const found = await validationPointers(await registerPairing(keys, pairingCode(), { public_key_jwk: jwk }));
      expect(
        found.some((pointer) => pointer.startsWith("/public_key_jwk")),
        JSON.stringify(jwk),
      ).toBe(true);
    }
  });

  it("refuses coordinates of the right length that are not a point on P-256 with 422 at /public_key_jwk", async () => {
    const keys = await deviceKeys();
    const y = keys.publicJwk.y!;
    const offCurve = { ...keys.publicJwk, y: `${y[0] === "A" ? "B" : "A"}${y.slice(1)}` };
    expect(offCurve.y).toHaveLength(43);
    expect(await validationPointers(await registerPairing(keys, pairingCode(), { public_key_jwk: offCurve }))).toEqual(["/public_key_jwk"]);
    const zero = { ...keys.publicJwk, x: "A".repeat(43), y: "A".repeat(43) };
    expect(await validationPointers(await registerPairing(keys, pairingCode(), { public_key_jwk: zero }))).toEqual(["/public_key_jwk"]);
  });

  it("refuses coordinates that are not 43 base64url characters with 422", async () => {
    const keys = await deviceKeys();
    for (const jwk of [
      { ...keys.publicJwk, x: keys.publicJwk.x!.slice(1) },
      { ...keys.publicJwk, y: `${keys.publicJwk.y}A` },
      { ...keys.publicJwk, x: `+${keys.publicJwk.x!.slice(1)}` },
    ]) {
      const found = await validationPointers(await registerPairing(keys, pairingCode(), { public_key_jwk: jwk }));
      expect(found.some((pointer) => pointer.startsWith("/public_key_jwk"))).toBe(true);
    }
  });

  it("refuses unknown members, and missing or malformed ones, with 422", async () => {
    const keys = await deviceKeys();
    expect(await validationPointers(await registerPairing(keys, pairingCode(), { camera_id: crypto.randomUUID() }))).toHaveLength(1);
    expect(await validationPointers(await registerPairing(keys, pairingCode(), { fingerprint: "short" }))).toContain("/fingerprint");
    expect(await validationPointers(await registerPairing(keys, pairingCode(), { key_id: "has space" }))).toContain("/key_id");
    expect(await validationPointers(await registerPairing(keys, pairingCode(), { key_id: "k".repeat(65) }))).toContain("/key_id");
    expect(
      await validationPointers(await postJson(REGISTER, { code: pairingCode(), fingerprint: keys.fingerprint, key_id: keys.keyId })),
    ).toContain("/public_key_jwk");
  });
});

describe("polling", () => {
  it("answers waiting until the code is claimed, never cached", async () => {
    const { keys, code } = await registeredPairing();
    const response = await poll(code, keys.fingerprint);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({ status: "waiting" });
    expect(await (await poll(code, keys.fingerprint)).json()).toEqual({ status: "waiting" });
  });

  it("is 403 PAIRING_FINGERPRINT_MISMATCH for another fingerprint, before and after the claim", async () => {
    const { keys, code } = await registeredPairing();
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
    const { keys: device, code } = await registeredPairing();
    await expirePairing(code);
    await expectProblem(await poll(code, device.fingerprint), 404, "PAIRING_CODE_NOT_FOUND");
  });

  it("hands over the camera once claimed, exactly once", async () => {
    const { keys, code } = await registeredPairing();
    const claimed = await claim(owner.token, code);
    expect(claimed.status).toBe(201);
    const camera = (await claimed.json()) as { id: string };

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
    const { keys, code } = await registeredPairing();
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
