import { base64url, generateKeyPair } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { verifiedUser } from "../../../support/accounts";
import {
  type AssertionRefusal,
  assertion,
  assertionRefusal,
  deviceKeys,
  expectAccepted,
  handshake,
  pairCamera,
  rawHandshake,
  type TestCamera,
} from "../../../support/camera";
import { pngImage } from "../../../support/image-fixtures";
import { upload } from "../../../support/media";

// Device assertions (decisions.md, Camera plugin; src/auth/device-assertion.ts) through HTTP: an
// ES256 JWT signed by the camera's registered key, `kid` = its key id, `iss` = `sub` =
// `camera:<id>`, `aud` = `relab-rpi-cam-relay`, `iat`, `nbf`, `exp` at most 120 s ahead, and a
// single-use `jti`. Checked on the tunnel handshake (101 when accepted) and the device routes.
// Every refusal is the same 401 `DEVICE_ASSERTION_INVALID`, whatever the reason. Replays, browser
// `Origin`s, revoked cameras and the device's self-unpair are in handshake.test.ts.

const AUDIENCE = "relab-rpi-cam-relay";

let camera: TestCamera;
let otherCamera: TestCamera;
let expectRefusedAssertion: AssertionRefusal["expectRefusedAssertion"];
let refused: AssertionRefusal["refused"];

beforeAll(async () => {
  const ownerToken = (await verifiedUser("assertowner")).tokens.access_token;
  camera = await pairCamera(ownerToken, "Assertion camera");
  otherCamera = await pairCamera(ownerToken, "Other camera");
  ({ expectRefusedAssertion, refused } = await assertionRefusal(camera));
});

const now = () => Math.floor(Date.now() / 1000);

const encodeJson = (value: unknown) => base64url.encode(JSON.stringify(value));

/** `token` with its protected header replaced (payload and signature kept). */
function withHeader(token: string, header: Record<string, unknown>, signature?: string): string {
  const [, payload, original] = token.split(".");
  return `${encodeJson(header)}.${payload}.${signature ?? original}`;
}

describe("a valid assertion", () => {
  it("opens the tunnel", async () => {
    await expectAccepted(await handshake(camera));
  });

  it("may live exactly 120 s", async () => {
    await expectAccepted(await handshake(camera, await assertion(camera, { lifetime: 120 })));
  });

  it("is accepted with `jku` and `x5u` headers, which are ignored", async () => {
    const token = await assertion(camera, {
      header: { jku: "https://attacker.example/jwks.json", x5u: "https://attacker.example/cert.pem" },
    });
    await expectAccepted(await handshake(camera, token));
  });

  it("is accepted on a device route as well (a preview thumbnail upload)", async () => {
    const path = `/v1/plugins/rpi-cam/device/cameras/${camera.id}/preview-thumbnail-upload`;
    const part = { bytes: await pngImage(), name: "preview.png", type: "image/png" };
    const response = await upload(path, await assertion(camera), part);
    expect(response.status, await response.clone().text()).toBe(204);
    const token = await assertion(camera);
    expect((await upload(path, token, part)).status).toBe(204);
    // Spent there, the token is refused on the upload route as on the tunnel.
    await expectRefusedAssertion(await upload(path, token, part));
    await refused(token);
  });
});

describe("the Authorization header", () => {
  it("is required", async () => {
    await expectRefusedAssertion(await rawHandshake(camera, {}));
  });

  it("must carry a bearer JWT", async () => {
    const token = await assertion(camera);
    for (const authorization of [
      "Bearer",
      "Bearer ",
      "Bearer not-a-jwt",
      "Bearer a.b",
      "Bearer a.b.c.d.e",
      `Basic ${btoa("camera:secret")}`,
      `Bearer ${token}.extra`,
      token,
    ]) {
      await expectRefusedAssertion(await rawHandshake(camera, { Authorization: authorization }));
    }
  });

  it("refuses a three-part token whose header is not a JSON object (401, not a server error)", async () => {
    const [, payload, signature] = (await assertion(camera)).split(".");
    const tokens = [
      "abc.def.ghi",
      `${encodeJson("ES256")}.${payload}.${signature}`,
      `${encodeJson([camera.keyId])}.${payload}.${signature}`,
    ];
    const responses = await Promise.all(tokens.map((token) => rawHandshake(camera, { Authorization: `Bearer ${token}` })));
    expect(responses.map((response) => response.status)).toEqual([401, 401, 401]);
    for (const response of responses) await expectRefusedAssertion(response);
  });
});

describe("the algorithm and key", () => {
  it("refuses HS256, even keyed with the camera's key id", async () => {
    const secret = (await crypto.subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, true, ["sign", "verify"])) as CryptoKey;
    await refused(await assertion(camera, { header: { alg: "HS256" }, key: secret }));
  });

  it("refuses ES384", async () => {
    const { privateKey } = await generateKeyPair("ES384");
    await refused(await assertion(camera, { header: { alg: "ES384" }, key: privateKey }));
  });

  it("refuses `none`, signed or not", async () => {
    const token = await assertion(camera);
    await refused(withHeader(token, { alg: "none", kid: camera.keyId, typ: "JWT" }));
    await refused(withHeader(token, { alg: "none", kid: camera.keyId, typ: "JWT" }, ""));
    // The payload was never spent: the genuine assertion still opens the tunnel.
    await expectAccepted(await handshake(camera, token));
  });

  it("refuses a header without kid or alg", async () => {
    const token = await assertion(camera);
    await refused(withHeader(token, { alg: "ES256", typ: "JWT" }));
    await refused(withHeader(token, { kid: camera.keyId, typ: "JWT" }));
  });

  it("refuses a wrong kid", async () => {
    await refused(await assertion(camera, { header: { kid: "key-unknown" } }));
    await refused(await assertion(camera, { header: { kid: otherCamera.keyId } }));
  });

  it("refuses the right kid signed by another key", async () => {
    const attacker = await deviceKeys();
    await refused(await assertion(camera, { key: attacker.privateKey }));
    await refused(await assertion(camera, { key: otherCamera.privateKey }));
  });

  it("refuses a `jwk` header carrying the signer's own key: the stored key is used", async () => {
    const attacker = await deviceKeys();
    await refused(await assertion(camera, { key: attacker.privateKey, header: { jwk: attacker.publicJwk } }));
  });

  it("refuses a tampered payload", async () => {
    const [header, , signature] = (await assertion(camera)).split(".");
    const forged = encodeJson({
      iss: `camera:${camera.id}`,
      sub: `camera:${camera.id}`,
      aud: AUDIENCE,
      iat: now(),
      nbf: now(),
      exp: now() + 60,
      jti: crypto.randomUUID(),
    });
    await refused(`${header}.${forged}.${signature}`);
  });
});

describe("the claims", () => {
  it("refuses an expired assertion", async () => {
    const t = now();
    await refused(await assertion(camera, { claims: { iat: t - 70, nbf: t - 70, exp: t - 10 } }));
  });

  it("refuses `nbf` beyond the 5 s tolerance", async () => {
    const t = now();
    await refused(await assertion(camera, { claims: { nbf: t + 30, exp: t + 60 } }));
  });

  it("refuses an assertion without `iat`", async () => {
    await refused(await assertion(camera, { claims: { iat: undefined } }));
  });

  it("refuses an assertion without `nbf` or `exp`", async () => {
    await refused(await assertion(camera, { claims: { nbf: undefined } }));
    await refused(await assertion(camera, { claims: { exp: undefined } }));
  });

  it("refuses an assertion without `jti`", async () => {
    await refused(await assertion(camera, { claims: { jti: undefined } }));
  });

  it("refuses a `jti` that is too short, too long or not a string", async () => {
    await refused(await assertion(camera, { claims: { jti: "abc1234" } }));
    await refused(await assertion(camera, { claims: { jti: "j".repeat(129) } }));
    await refused(await assertion(camera, { claims: { jti: 1234567890 } }));
  });

  it("refuses a lifetime over 120 s", async () => {
    await refused(await assertion(camera, { lifetime: 300 }));
    await refused(await assertion(camera, { lifetime: 121 }));
    // Over 120 s even though `exp` is near: issued long ago.
    const t = now();
    await refused(await assertion(camera, { claims: { iat: t - 100, nbf: t - 100, exp: t + 100 } }));
  });

  it("refuses `exp` more than 120 s ahead", async () => {
    const t = now();
    await refused(await assertion(camera, { claims: { iat: t + 200, nbf: t, exp: t + 300 } }));
    await refused(await assertion(camera, { claims: { exp: t + 3600 } }));
  });

  it("refuses an `iat` in the future", async () => {
    const t = now();
    await refused(await assertion(camera, { claims: { iat: t + 60, exp: t + 90 } }));
  });

  it("refuses a wrong or missing `aud`", async () => {
    await refused(await assertion(camera, { claims: { aud: "relab-api" } }));
    await refused(await assertion(camera, { claims: { aud: `${AUDIENCE}-dev` } }));
    await refused(await assertion(camera, { claims: { aud: undefined } }));
  });

  it("refuses `iss` or `sub` naming another camera", async () => {
    await refused(await assertion(camera, { claims: { iss: `camera:${otherCamera.id}` } }));
    await refused(await assertion(camera, { claims: { sub: `camera:${otherCamera.id}` } }));
    await refused(await assertion(camera, { claims: { iss: `camera:${otherCamera.id}`, sub: `camera:${otherCamera.id}` } }));
    await refused(await assertion(camera, { claims: { iss: camera.id, sub: camera.id } }));
  });

  it("refuses one camera's assertion for another camera", async () => {
    await refused(await assertion(camera), otherCamera);
    // Even with the other camera's kid, it is not signed by that camera's key.
    await refused(await assertion(camera, { header: { kid: otherCamera.keyId } }), otherCamera);
    // Nor does naming the other camera in the claims help.
    const claims = { iss: `camera:${otherCamera.id}`, sub: `camera:${otherCamera.id}` };
    await refused(await assertion(camera, { claims, header: { kid: otherCamera.keyId } }), otherCamera);
  });
});
