import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api, expectProblem } from "../../support/http";
import { encodeJpeg } from "../../support/image-fixtures";
import { scan, uploaded } from "../../support/media";
import {
  adminHeaders,
  buildRow,
  contributor,
  createProduct,
  csvTable,
  keysUnder,
  readRelease,
  requestRelease,
  runReleaseMessage,
  runReleaseSlice,
  settledRelease,
  stagedRows,
} from "../../support/releases";

let admin: Record<string, string>;
let ada: Awaited<ReturnType<typeof contributor>>;

beforeAll(async () => {
  admin = await adminHeaders();
  ada = await contributor("ada", true);
}, 30_000);

describe("a build that fails", () => {
  it("ends failed with its reason (superusers only), and a superuser's retry builds it from a new snapshot", {
    timeout: 90_000,
  }, async () => {
    const product = await createProduct(ada.headers, { name: "Toaster with a lost image", weight_g: 1200 });
    const item = await uploaded(`/v1/products/${product.id}/images`, ada.tokens.access_token, {
      bytes: encodeJpeg(48, 32, (x) => [x * 5, 30, 60]),
      name: "toaster.jpg",
      type: "image/jpeg",
    });
    await scan("images", item.id);
    const key = `images/${new URL(item.image_url!).pathname.split("/").pop()}`;
    // The served object is lost (its row still says clean): the build cannot copy it.
    const object = await env.UPLOADS.get(key);
    const bytes = new Uint8Array(await object!.arrayBuffer());
    await env.UPLOADS.delete(key);

    expect((await requestRelease(admin, { version: "3.0", title: "Will fail first" })).status).toBe(202);
    const failed = await settledRelease("3.0", admin);
    expect(failed.status).toBe("failed");
    expect(failed.failure_reason).toContain(`The image object ${key} is missing`);
    expect(failed.published_at).toBeNull();
    await expectProblem(await readRelease("3.0"), 404, "NOT_FOUND");
    await expectProblem(await readRelease("3.0", ada.headers), 404, "NOT_FOUND");
    expect(await (await api("/v1/releases")).json()).toMatchObject({ total: 0 });
    // The staging rows of the failed attempt are gone.
    const staged = await env.DB.prepare("SELECT count(*) AS n FROM release_records WHERE release_version = '3.0'").first<{ n: number }>();
    expect(staged!.n).toBe(0);

    // Repaired, retried: a new attempt from a new snapshot, which now holds a product made since.
    await env.UPLOADS.put(key, bytes, { httpMetadata: { contentType: "image/jpeg" } });
    await createProduct(ada.headers, { name: "Made between the attempts" });
    const retried = await api("/v1/admin/releases/3.0/retry", { method: "POST", headers: admin });
    expect(retried.status, await retried.clone().text()).toBe(202);
    expect(await retried.json()).toMatchObject({ version: "3.0", status: "building", failure_reason: null, snapshot_at: null });
    const published = await settledRelease("3.0", admin);
    expect(published.status, published.failure_reason ?? "").toBe("published");
    expect(published.failure_reason).toBeNull();
    const records = await csvTable("3.0", "records.csv");
    expect(records.map((r) => r.name).sort()).toEqual(["Made between the attempts", "Toaster with a lost image"]);
    const images = await csvTable("3.0", "images.csv");
    expect(images).toHaveLength(1);
    // Exactly the listed files and the image under the release: nothing doubled, nothing left over.
    expect(await keysUnder("releases/3.0/")).toEqual(
      [...published.files.map((f) => `releases/3.0/${f.path}`), `releases/3.0/${images[0]!.file}`].sort(),
    );
    expect(await keysUnder("release-staging/3.0/")).toEqual([]);
    await expectProblem(await api("/v1/admin/releases/3.0/retry", { method: "POST", headers: admin }), 409, "RELEASE_PUBLISHED");
  });
});

describe("retrying", () => {
  it("refuses a build that is alive, and takes over one that stalled", async () => {
    await env.DB.prepare(
      "INSERT INTO releases (version, title, licence, status, base_url, build_id) VALUES ('6.0', 'Stalled', 'CC-BY-4.0', 'building', 'http://localhost', 'lost-build')",
    ).run();
    await expectProblem(await api("/v1/admin/releases/6.0/retry", { method: "POST", headers: admin }), 409, "RELEASE_BUILDING");
    await expectProblem(await api("/v1/admin/releases/9.9.9/retry", { method: "POST", headers: admin }), 404, "NOT_FOUND");
    await expectProblem(await api("/v1/admin/releases/latest/retry", { method: "POST", headers: admin }), 404, "NOT_FOUND");
    // No sign of life for over ten minutes: its message was lost.
    await env.DB.prepare("UPDATE releases SET updated_at = unixepoch() - 601 WHERE version = '6.0'").run();
    const [one, two] = await Promise.all([1, 2].map(() => api("/v1/admin/releases/6.0/retry", { method: "POST", headers: admin })));
    // Compare-and-set: of two retries at once, one starts the new attempt.
    expect([one!.status, two!.status].sort()).toEqual([202, 409]);
    expect((await buildRow("6.0"))!.build_id).not.toBe("lost-build");
    const published = await settledRelease("6.0", admin);
    expect(published.status).toBe("published");
    // The lost attempt's message, should it arrive now, changes nothing.
    expect(await runReleaseSlice("6.0", "lost-build")).toEqual({ acked: true, retried: false });
    expect(await (await readRelease("6.0")).json()).toEqual(published);
  });
});

describe("staging rows an ended build left behind", () => {
  it("are removed by the next build's snapshot", async () => {
    // As if the clean-up after publishing 3.0 had failed (or its message was lost).
    await env.DB.prepare(
      "INSERT INTO release_records (release_version, id, owner_id, name, created_at, updated_at) VALUES ('3.0', 999999, 1, 'left over', 0, 0)",
    ).run();
    expect((await requestRelease(admin, { version: "3.1", title: "Cleans up" })).status).toBe(202);
    expect((await settledRelease("3.1", admin)).status).toBe("published");
    // (3.1's own rows go with its clean-up message, below.)
    expect(await stagedRows("3.0")).toBe(0);
  });
});

describe("the clean-up after publication", () => {
  it("is a message of its own that empties the published attempt's staging rows, and nobody else's", async () => {
    expect((await requestRelease(admin, { version: "7.0", title: "Cleaned up" })).status).toBe(202);
    expect((await settledRelease("7.0", admin)).status).toBe("published");
    // The slice that published it queued the clean-up; the real queue runs it soon after.
    const deadline = Date.now() + 20_000;
    while ((await stagedRows("7.0")) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await stagedRows("7.0")).toBe(0);

    // Staged rows of 7.0 as if its clean-up had not run yet: a message naming another attempt,
    // or a release still building, deletes nothing; the published attempt's message removes them.
    const stage = (version: string) =>
      env.DB.prepare(
        "INSERT INTO release_records (release_version, id, owner_id, name, created_at, updated_at) VALUES (?, 999998, 1, 'staged', 0, 0)",
      )
        .bind(version)
        .run();
    await stage("7.0");
    const { build_id: buildId } = (await buildRow("7.0"))!;
    expect(await runReleaseMessage({ type: "release.cleanup", version: "7.0", build_id: "another-attempt" })).toEqual({
      acked: true,
      retried: false,
    });
    expect(await stagedRows("7.0")).toBe(1);
    await env.DB.prepare(
      "INSERT INTO releases (version, title, licence, status, base_url, build_id) VALUES ('7.1', 'Building', 'CC-BY-4.0', 'building', 'http://localhost', 'b71')",
    ).run();
    await stage("7.1");
    expect(await runReleaseMessage({ type: "release.cleanup", version: "7.1", build_id: "b71" })).toEqual({ acked: true, retried: false });
    expect(await stagedRows("7.1")).toBe(1);
    expect(await runReleaseMessage({ type: "release.cleanup", version: "7.0", build_id: buildId })).toEqual({
      acked: true,
      retried: false,
    });
    expect(await stagedRows("7.0")).toBe(0);
    // A duplicate finds nothing to do.
    expect(await runReleaseMessage({ type: "release.cleanup", version: "7.0", build_id: buildId })).toEqual({
      acked: true,
      retried: false,
    });
  });
});
