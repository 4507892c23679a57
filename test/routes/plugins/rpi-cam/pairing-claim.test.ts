import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bearer, bearerLogin, postJson, registerUser, verifiedUser } from "../../../support/accounts";
import { claim, expirePairing, pairingCode, registeredPairing, validationPointers, withCharacter } from "../../../support/camera";
import { api, expectProblem } from "../../../support/http";
import { expectRateLimited, expectRefused, freshIp, limitedApi } from "../../../support/limits";

// Camera pairing through HTTP, the owner's side (decisions.md, Camera plugin): the owner claims
// the device's code (a verified account; the claim creates the camera, exactly once). Claims are
// limited per client IP and, always, per code. The device's side (register, poll) and the tunnel
// stay out of the OpenAPI schema. Registering and polling are in pairing.test.ts.

type Camera = {
  id: string;
  name: string;
  description: string | null;
  owner_id: number;
  last_seen_at: string | null;
  created_at: string;
  updated_at: string;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const CLAIM = "/v1/plugins/rpi-cam/pairing/claim";

let owner: { id: number; token: string };
let other: { id: number; token: string };

beforeAll(async () => {
  const [a, b] = [await verifiedUser("claimowner"), await verifiedUser("claimother")];
  owner = { id: a.id, token: a.tokens.access_token };
  other = { id: b.id, token: b.tokens.access_token };
});

describe("claiming a code", () => {
  it("is 401 for an anonymous caller", async () => {
    const { code } = await registeredPairing();
    const response = await postJson(CLAIM, { code, camera_name: "Anonymous camera" });
    await expectProblem(response, 401, "AUTHENTICATION_REQUIRED");
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    // The code stays claimable.
    expect((await claim(owner.token, code)).status).toBe(201);
  });

  it("is 403 EMAIL_NOT_VERIFIED for an unverified account", async () => {
    const user = await registerUser();
    const { access_token } = await bearerLogin(user);
    const { code } = await registeredPairing();
    await expectProblem(await claim(access_token, code), 403, "EMAIL_NOT_VERIFIED");
    // The code stays claimable.
    expect((await claim(owner.token, code)).status).toBe(201);
  });

  it("is 404 PAIRING_CODE_NOT_FOUND for a code never registered", async () => {
    await expectProblem(await claim(owner.token, pairingCode()), 404, "PAIRING_CODE_NOT_FOUND");
  });

  it("is 404 PAIRING_CODE_NOT_FOUND for an expired code", async () => {
    const { code } = await registeredPairing();
    await expirePairing(code);
    await expectProblem(await claim(owner.token, code), 404, "PAIRING_CODE_NOT_FOUND");
  });

  it("answers 201 with the new camera and its Location", async () => {
    const { code } = await registeredPairing();
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
    const { code } = await registeredPairing();
    const response = await claim(owner.token, code, "No description");
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ name: "No description", description: null });
  });

  it("refuses bad claim bodies with 422", async () => {
    const { code } = await registeredPairing();
    expect(await validationPointers(await postJson(CLAIM, { code, camera_name: "" }, bearer(owner.token)))).toContain("/camera_name");
    expect(await validationPointers(await postJson(CLAIM, { code, camera_name: "x".repeat(101) }, bearer(owner.token)))).toContain(
      "/camera_name",
    );
    expect(
      await validationPointers(await postJson(CLAIM, { code: withCharacter(code, "0"), camera_name: "Cam" }, bearer(owner.token))),
    ).toContain("/code");
    expect(
      await validationPointers(await postJson(CLAIM, { code, camera_name: "Cam", owner_id: other.id }, bearer(owner.token))),
    ).toHaveLength(1);
    // None of them used up the code.
    expect((await claim(owner.token, code)).status).toBe(201);
  });

  it("is 409 PAIRING_CODE_ALREADY_CLAIMED the second time, by anyone", async () => {
    const { code } = await registeredPairing();
    expect((await claim(owner.token, code)).status).toBe(201);
    await expectProblem(await claim(owner.token, code), 409, "PAIRING_CODE_ALREADY_CLAIMED");
    await expectProblem(await claim(other.token, code), 409, "PAIRING_CODE_ALREADY_CLAIMED");
  });

  it("creates exactly one camera when two claims race", async () => {
    const { code } = await registeredPairing();
    const responses = await Promise.all([claim(owner.token, code, "Race A"), claim(other.token, code, "Race B")]);
    expect(responses.map((response) => response.status).sort()).toEqual([201, 409]);
    const loser = responses.find((response) => response.status === 409)!;
    await expectProblem(loser, 409, "PAIRING_CODE_ALREADY_CLAIMED");
    const winner = (await responses.find((response) => response.status === 201)!.json()) as Camera;
    const { results } = await env.DB.prepare("SELECT id FROM cameras WHERE name IN ('Race A', 'Race B')").all<{ id: string }>();
    expect(results).toEqual([{ id: winner.id }]);
  });
});

describe("claim limits", () => {
  it("refuses the sixth claim attempt on one code within ten minutes, whoever makes it", async () => {
    const { code } = await registeredPairing();
    const third = (await verifiedUser("claimthird")).tokens.access_token;
    expect((await claim(owner.token, code)).status).toBe(201);
    for (const token of [other.token, owner.token, other.token, owner.token]) {
      await expectProblem(await claim(token, code), 409, "PAIRING_CODE_ALREADY_CLAIMED");
    }
    // Counted per code even with the request-rate limiters off (the suites run with them off).
    await expectRateLimited(await claim(third, code), `"pairing-claim-code";q=5;w=600`);
    // Another code is not affected.
    const fresh = await registeredPairing();
    expect((await claim(third, fresh.code)).status).toBe(201);
  });

  it("counts attempts on unknown codes too", async () => {
    const code = pairingCode();
    for (let i = 0; i < 5; i++)
      await expectProblem(await claim(i % 2 === 0 ? owner.token : other.token, code), 404, "PAIRING_CODE_NOT_FOUND");
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
    expect(
      paths
        .filter((path) => path.includes("rpi-cam"))
        .every((path) => path.startsWith("/v1/plugins/rpi-cam/pairing/claim") || path.startsWith("/v1/plugins/rpi-cam/cameras")),
    ).toBe(true);
  });
});
