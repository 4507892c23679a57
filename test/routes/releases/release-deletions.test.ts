import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api } from "../../support/http";
import { encodeJpeg } from "../../support/image-fixtures";
import { scan, uploaded } from "../../support/media";
import {
  adminHeaders,
  contributor,
  createProduct,
  csvTable,
  fileBytes,
  type ReleaseBody,
  readRelease,
  requestRelease,
  settledRelease,
  sha256Hex,
} from "../../support/releases";

// Spec, Versioning rule 4: deleting accounts, products or uploads on the live platform does not
// retract released data. Everything is done through the API and the real queues (the media purge
// included), then every byte of the published release is compared with what it was.

let admin: Record<string, string>;
let ada: Awaited<ReturnType<typeof contributor>>;
let bob: Awaited<ReturnType<typeof contributor>>;
let carol: Awaited<ReturnType<typeof contributor>>;
let adaProduct: { id: number; components: { id: number }[] };
let bobProduct: { id: number };
let carolProduct: { id: number };
let image: { id: string; key: string };
let first: ReleaseBody;

/** Every file of a release, image files included, as bytes by path. */
async function allFiles(release: ReleaseBody): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  for (const file of release.files) files.set(file.path, await fileBytes(release.version, file.path));
  for (const row of await csvTable(release.version, "images.csv")) files.set(row.file!, await fileBytes(release.version, row.file!));
  return files;
}

async function waitFor(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  admin = await adminHeaders();
  [ada, bob, carol] = [await contributor("ada", true), await contributor("bob", true), await contributor("carol", true)];
  adaProduct = await createProduct(ada.headers, {
    name: "Ada's vacuum cleaner",
    weight_g: 4100,
    components: [{ name: "Motor", amount_in_parent: 1, weight_g: 900 }],
  });
  bobProduct = await createProduct(bob.headers, { name: "Bob's printer", weight_g: 6200 });
  carolProduct = await createProduct(carol.headers, { name: "Carol's kettle", weight_g: 1100 });
  const item = await uploaded(`/v1/products/${adaProduct.id}/images`, ada.tokens.access_token, {
    bytes: encodeJpeg(80, 60, (x, y) => [x * 3, y * 4, 90]),
    name: "vacuum.jpg",
    type: "image/jpeg",
  });
  await scan("images", item.id);
  image = { id: item.id, key: new URL(item.image_url!).pathname.split("/").pop()! };
  expect((await requestRelease(admin, { version: "5.0", title: "Before the deletions" })).status).toBe(202);
  first = await settledRelease("5.0", admin);
  expect(first.status, first.failure_reason ?? "").toBe("published");
}, 90_000);

describe("deletions on the live platform after a release is published", () => {
  it("leave every file of the release, and its metadata, byte for byte as they were", async () => {
    const before = await allFiles(first);
    expect(before.has(`images/${image.key}`)).toBe(true);

    // An upload deleted (its object purged on the media queue), a product deleted, an account deleted.
    expect((await api(`/v1/products/${adaProduct.id}/images/${image.id}`, { method: "DELETE", headers: ada.headers })).status).toBe(204);
    await waitFor(async () => (await env.UPLOADS.head(`images/${image.key}`)) === null, "the media purge of the deleted image");
    expect((await api(`/v1/products/${bobProduct.id}`, { method: "DELETE", headers: bob.headers })).status).toBe(204);
    const deleted = await api("/v1/users/me", {
      method: "DELETE",
      headers: { ...ada.headers, "content-type": "application/json" },
      body: JSON.stringify({ current_password: ada.password }),
    });
    expect(deleted.status, await deleted.clone().text()).toBe(204);

    const after = await allFiles(first);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [path, bytes] of before) {
      expect(after.get(path), path).toEqual(bytes);
      const listed = first.files.find((f) => f.path === path);
      if (listed) expect(await sha256Hex(after.get(path)!)).toBe(listed.sha256);
    }
    expect(await (await readRelease("5.0")).json()).toEqual(first);
    const records = await csvTable("5.0", "records.csv");
    expect(records.map((r) => r.name).sort()).toEqual(["Ada's vacuum cleaner", "Bob's printer", "Carol's kettle", "Motor"]);
  });

  it("shape the next release, whose pseudonyms match the first one's for the same owner", async () => {
    expect((await requestRelease(admin, { version: "5.1", title: "After the deletions" })).status).toBe(202);
    const second = await settledRelease("5.1", admin);
    expect(second.status, second.failure_reason ?? "").toBe("published");
    const before = await csvTable("5.0", "records.csv");
    const after = await csvTable("5.1", "records.csv");
    // Ada's account is gone (her products now belong to the anonymous system account, which never
    // accepted the terms) and Bob deleted his product: only Carol's remains.
    expect(after.map((r) => r.name)).toEqual(["Carol's kettle"]);
    const carolBefore = before.find((r) => r.id === String(carolProduct.id))!.owner_pseudonym;
    expect(after[0]!.owner_pseudonym).toBe(carolBefore);
    // Three owners, three different pseudonyms.
    expect(new Set(before.map((r) => r.owner_pseudonym)).size).toBe(3);
    expect(await csvTable("5.1", "images.csv")).toEqual([]);
    for (const text of [JSON.stringify(before), JSON.stringify(after)]) {
      for (const user of [ada, bob, carol]) {
        expect(text).not.toContain(user.username);
        expect(text).not.toContain(user.email);
      }
    }
  });
});
