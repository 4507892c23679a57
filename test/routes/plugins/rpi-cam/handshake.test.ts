import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, verifiedUser } from "../../../support/accounts";
import {
  type AssertionRefusal,
  assertion,
  assertionRefusal,
  expectAccepted,
  handshake,
  pairCamera,
  rawHandshake,
  type TestCamera,
} from "../../../support/camera";
import { api, expectProblem } from "../../../support/http";

// The tunnel handshake around the device assertion (decisions.md, Camera plugin): an assertion is
// single-use, per camera, even when two handshakes race with it; a deleted camera, or one whose
// owner is inactive, is refused; a browser `Origin` is refused (403) before the assertion is looked
// at, and a request that is not an Upgrade is answered 426, neither spending it; and the device may
// unpair itself. Every assertion refusal is the one 401 `DEVICE_ASSERTION_INVALID`. The assertion's
// own checks (header, key, claims) are in assertions.test.ts.

let ownerToken: string;
let camera: TestCamera;
let otherCamera: TestCamera;
let expectRefusedAssertion: AssertionRefusal["expectRefusedAssertion"];
let refused: AssertionRefusal["refused"];

beforeAll(async () => {
  ownerToken = (await verifiedUser("shakeowner")).tokens.access_token;
  camera = await pairCamera(ownerToken, "Handshake camera");
  otherCamera = await pairCamera(ownerToken, "Other camera");
  ({ expectRefusedAssertion, refused } = await assertionRefusal(camera));
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
    const idle = await verifiedUser("shakeidle");
    const idleCamera = await pairCamera(idle.tokens.access_token, "Idle camera");
    await expectAccepted(await handshake(idleCamera));
    // `meta.changes` counts the counters' trigger writes too: the row itself is read back.
    await env.DB.prepare("UPDATE users SET is_active = 0 WHERE id = ?").bind(idle.id).run();
    expect(await env.DB.prepare("SELECT is_active FROM users WHERE id = ?").bind(idle.id).first("is_active")).toBe(0);
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
    await expectProblem(await rawHandshake(camera, { Origin: "https://evil.example" }), 403, "BROWSER_ORIGIN_REFUSED");
    await expectProblem(
      await rawHandshake(camera, { Origin: "https://evil.example", Authorization: "Bearer not-a-jwt" }),
      403,
      "BROWSER_ORIGIN_REFUSED",
    );
  });

  it("answers 426 to a request that is not a WebSocket upgrade", async () => {
    const token = await assertion(camera);
    const response = await rawHandshake(camera, { Authorization: `Bearer ${token}` }, false);
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
