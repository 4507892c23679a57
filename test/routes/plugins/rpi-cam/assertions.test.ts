import { env } from "cloudflare:workers";
import { base64url, generateKeyPair, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, verifiedUser } from "../../../support/accounts";
import { assertion, deviceKeys, handshake, pairCamera, type TestCamera } from "../../../support/camera";
import { api, expectProblem } from "../../../support/http";
import { pngImage } from "../../../support/image-fixtures";
import { upload } from "../../../support/media";

// Device assertions (decisions.md, Camera plugin; src/auth/device-assertion.ts) through HTTP: an
// ES256 JWT signed by the camera's registered key, `kid` = its key id, `iss` = `sub` =
// `camera:<id>`, `aud` = `relab-rpi-cam-relay`, `iat`, `nbf`, `exp` at most 120 s ahead, and a
// single-use `jti`. Checked on the tunnel handshake (101 when accepted) and the device routes.
// Every refusal is the same 401 `DEVICE_ASSERTION_INVALID`, whatever the reason. A browser
// `Origin` on the handshake is refused before any of it.

const AUDIENCE = "relab-rpi-cam-relay";

let ownerToken: string;
let camera: TestCamera;
let otherCamera: TestCamera;
/** The detail of the refusal of a handshake without credentials: every refusal must say the same. */
let refusalDetail: string;

beforeAll(async () => {
  ownerToken = (await verifiedUser("assertowner")).tokens.access_token;
  camera = await pairCamera(ownerToken, "Assertion camera");
  otherCamera = await pairCamera(ownerToken, "Other camera");
  const response = await connect(camera, {});
  refusalDetail = (await expectProblem(response, 401, "DEVICE_ASSERTION_INVALID")).detail;
  expect(refusalDetail.length).toBeGreaterThan(0);
});

const now = () => Math.floor(Date.now() / 1000);

/** The handshake of `target` with exactly these headers (an Upgrade unless `upgrade` is false). */
function connect(target: TestCamera, headers: Record<string, string>, upgrade = true): Promise<Response> {
  const url = new URL(target.wsUrl);
  return api(`${url.pathname}${url.search}`, { headers: upgrade ? { Upgrade: "websocket", ...headers } : headers });
}

/** Asserts the handshake was accepted, then closes the tunnel. */
async function expectAccepted(response: Response): Promise<void> {
  expect(response.status, response.status === 101 ? "" : await response.text()).toBe(101);
  const socket = response.webSocket!;
  expect(socket).toBeTruthy();
  socket.accept();
  socket.close(1000, "test done");
}

/** Asserts the one refusal of every bad assertion: 401, the same code and detail, and a challenge. */
async function expectRefusedAssertion(response: Response): Promise<void> {
  const problem = await expectProblem(response, 401, "DEVICE_ASSERTION_INVALID");
  expect(problem.detail).toBe(refusalDetail);
  expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /);
}

/** The handshake of `camera` with `token` must be refused. */
async function refused(token: string, target: TestCamera = camera): Promise<void> {
  await expectRefusedAssertion(await handshake(target, token));
}

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
    await expectRefusedAssertion(await connect(camera, {}));
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
      await expectRefusedAssertion(await connect(camera, { Authorization: authorization }));
    }
  });

  it("refuses a three-part token whose header is not a JSON object (401, not a server error)", async () => {
    const [, payload, signature] = (await assertion(camera)).split(".");
    const tokens = ["abc.def.ghi", `${encodeJson("ES256")}.${payload}.${signature}`, `${encodeJson([camera.keyId])}.${payload}.${signature}`];
    const responses = await Promise.all(tokens.map((token) => connect(camera, { Authorization: `Bearer ${token}` })));
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
    const forged = encodeJson({ iss: `camera:${camera.id}`, sub: `camera:${camera.id}`, aud: AUDIENCE, iat: now(), nbf: now(), exp: now() + 60, jti: crypto.randomUUID() });
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

describe("replays", () => {
  it("refuses the same assertion the second time", async () => {
    const token = await assertion(camera);
    await expectAccepted(await handshake(camera, token));
    await refused(token);
  });

  it("refuses a new assertion reusing a spent `jti`", async () => {
    const jti = crypto.randomUUID();
    await expectAccepted(await handshake(camera, await assertion(camera, { claims: { jti } })));
    await refused(await assertion(camera, { claims: { jti } }));
  });

  it("accepts exactly one of two handshakes racing with one assertion", async () => {
    const token = await assertion(camera);
    const responses = await Promise.all([handshake(camera, token), handshake(camera, token)]);
    expect(responses.map((response) => response.status).sort()).toEqual([101, 401]);
    await expectAccepted(responses.find((response) => response.status === 101)!);
    await expectRefusedAssertion(responses.find((response) => response.status === 401)!);
  });

  it("keeps `jti`s per camera: another camera may use the same one", async () => {
    const jti = crypto.randomUUID();
    await expectAccepted(await handshake(camera, await assertion(camera, { claims: { jti } })));
    await expectAccepted(await handshake(otherCamera, await assertion(otherCamera, { claims: { jti } })));
  });
});

describe("revoked cameras and inactive owners", () => {
  it("refuses a deleted camera's assertions, even those made before", async () => {
    const doomed = await pairCamera(ownerToken, "Doomed camera");
    await expectAccepted(await handshake(doomed));
    const early = await assertion(doomed);
    const deleted = await api(`/v1/plugins/rpi-cam/cameras/${doomed.id}`, { method: "DELETE", headers: bearer(ownerToken) });
    expect(deleted.status, await deleted.clone().text()).toBe(204);
    await refused(early, doomed);
    await refused(await assertion(doomed), doomed);
  });

  it("refuses the camera of an inactive owner", async () => {
    const idle = await verifiedUser("assertidle");
    const idleCamera = await pairCamera(idle.tokens.access_token, "Idle camera");
    await expectAccepted(await handshake(idleCamera));
    const result = await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(idle.id).run();
    expect(result.meta.changes).toBe(1);
    await refused(await assertion(idleCamera), idleCamera);
  });
});

describe("the handshake itself", () => {
  it("refuses an Origin header with 403 BROWSER_ORIGIN_REFUSED, before looking at the assertion", async () => {
    const token = await assertion(camera);
    for (const origin of ["https://evil.example", "http://localhost", "null"]) {
      await expectProblem(await handshake(camera, token, { Origin: origin }), 403, "BROWSER_ORIGIN_REFUSED");
    }
    // The assertion was not spent by the refused handshakes.
    await expectAccepted(await handshake(camera, token));
  });

  it("refuses an Origin header with 403 even without Authorization", async () => {
    await expectProblem(await connect(camera, { Origin: "https://evil.example" }), 403, "BROWSER_ORIGIN_REFUSED");
    await expectProblem(await connect(camera, { Origin: "https://evil.example", Authorization: "Bearer not-a-jwt" }), 403, "BROWSER_ORIGIN_REFUSED");
  });

  it("answers 426 to a request that is not a WebSocket upgrade", async () => {
    const token = await assertion(camera);
    const response = await connect(camera, { Authorization: `Bearer ${token}` }, false);
    expect(response.status).toBe(426);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(response.headers.get("upgrade")?.toLowerCase()).toBe("websocket");
    // Nor was the assertion spent.
    await expectAccepted(await handshake(camera, token));
  });
});

describe("the device's self-unpair", () => {
  it("refuses a bad assertion, then with a valid one deletes the camera, whose assertions are then refused", async () => {
    const leaving = await pairCamera(ownerToken, "Leaving camera");
    const path = `/v1/plugins/rpi-cam/device/cameras/${leaving.id}/self`;
    await expectRefusedAssertion(await api(path, { method: "DELETE" }));
    await expectRefusedAssertion(await api(path, { method: "DELETE", headers: bearer(await assertion(camera)) }));
    await expectRefusedAssertion(await api(path, { method: "DELETE", headers: bearer(await assertion(leaving, { lifetime: 300 })) }));

    const response = await api(path, { method: "DELETE", headers: bearer(await assertion(leaving)) });
    expect(response.status, await response.clone().text()).toBe(204);
    await refused(await assertion(leaving), leaving);
    const read = await api(`/v1/plugins/rpi-cam/cameras/${leaving.id}`, { headers: bearer(ownerToken) });
    expect(read.status).toBe(404);
  });
});
