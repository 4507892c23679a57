import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/lib/logger";
import { buildServices } from "../../../src/services/platform/build-services";
import { runBuildSlice, type SliceOutcome } from "../../../src/services/releases/build";
import { deletionJobs, finishDeletionJobs } from "../../support/deletions";
import { api } from "../../support/http";
import { adminHeaders, contributor, createProduct, csvTable, type ReleaseBody, readRelease, referenceRow } from "../../support/releases";

// A snapshot copied in slices (RELEASE_SNAPSHOT_RECORDS: 2 records a batch here, whole base
// products at a time): writes that land between its batches, before or after the copy reached
// their records, leave the release as the dataset was at the snapshot's instant; a batch that dies
// copies nothing and the retry goes on from the last one (docs/releases.md, "The snapshot").

const VERSION = "4.2";
const BUILD = "build-sliced-snapshot";
const VARS = { RELEASE_SNAPSHOT_RECORDS: "2" };
const svc = () => buildServices({ ...env, ...VARS } as typeof env, { log: createLogger({ test: "release-snapshot-slices" }) });
/** A deadline already past: every slice does one unit of work (a snapshot batch, a step, a page) and stops. */
const slice = (): Promise<SliceOutcome> => runBuildSlice(svc(), { version: VERSION, buildId: BUILD }, { deadline: 0 });
const progress = () =>
  env.DB.prepare("SELECT cursor, max_id, records FROM release_snapshot_progress WHERE release_version = ?")
    .bind(VERSION)
    .first<{ cursor: number; max_id: number; records: number }>();

type Created = { id: number; components: { id: number }[] };
let ada: Awaited<ReturnType<typeof contributor>>;
let steel: number;
let copper: number;
let first: Created;
let renamed: Created;
let removed: Created;
let edited: Created;
let halfDeleted: Created;
let doomed: number;

beforeAll(async () => {
  await adminHeaders();
  ada = await contributor("slicedsnap", true);
  steel = await referenceRow("materials", "Steel (sliced snapshot)");
  copper = await referenceRow("materials", "Copper (sliced snapshot)");
  const product = (name: string) =>
    createProduct(ada.headers, {
      name,
      bill_of_materials: [{ material_id: steel, quantity: 2, unit: "kg" }],
      components: [{ name: `${name}: motor`, amount_in_parent: 1, bill_of_materials: [{ material_id: copper, quantity: 300, unit: "g" }] }],
    });
  first = await product("Blender copied first");
  renamed = await product("Toaster as it was");
  removed = await product("Iron deleted during the snapshot");
  edited = await product("Mixer whose materials change");
  // A product with a component whose deletion is under way at the snapshot's instant (60 records
  // below it: a deletion job's), kept half-done by a trigger that stops its slices.
  halfDeleted = await createProduct(ada.headers, {
    name: "Vacuum losing its brush",
    components: [
      { name: "Hose", amount_in_parent: 1 },
      {
        name: "Brush roll",
        amount_in_parent: 1,
        components: Array.from({ length: 60 }, (_, i) => ({ name: `Bristle ${i}`, amount_in_parent: 1 })),
      },
    ],
  });
  doomed = halfDeleted.components[1]!.id;
  await env.DB.prepare(
    `CREATE TRIGGER test_deletion_held BEFORE DELETE ON products WHEN old.root_id = ${halfDeleted.id} BEGIN SELECT RAISE(ABORT, 'held'); END`,
  ).run();
  expect((await api(`/v1/components/${doomed}`, { method: "DELETE", headers: ada.headers })).status).toBe(204);
  await env.DB.prepare(
    "INSERT INTO releases (version, title, licence, status, base_url, build_id) VALUES (?, 'Sliced snapshot', 'CC-BY-4.0', 'building', 'http://localhost', ?)",
  )
    .bind(VERSION, BUILD)
    .run();
}, 30_000);

describe("a snapshot copied in slices", () => {
  it("holds the dataset as it was at its instant, whatever lands between its batches", async () => {
    // The instant: the accounts, the reference tables, the newest record.
    expect(await slice()).toEqual({ kind: "continue" });
    expect(await progress()).toMatchObject({ cursor: 0, records: 0 });
    // The first batch copies the first product (2 records a batch, whole products).
    expect(await slice()).toEqual({ kind: "continue" });
    const afterFirst = (await progress())!;
    expect(afterFirst.cursor).toBeGreaterThanOrEqual(first.id);
    expect(afterFirst.cursor).toBeLessThan(renamed.id);

    const patch = (path: string, body: unknown) =>
      api(path, {
        method: "PATCH",
        headers: { ...ada.headers, "content-type": "application/json", "if-match": '"1"' },
        body: JSON.stringify(body),
      });
    // Writes after the instant: to a product already copied, and to ones not copied yet.
    expect((await patch(`/v1/products/${first.id}`, { name: "Blender renamed later" })).status).toBe(200);
    expect((await patch(`/v1/products/${renamed.id}`, { name: "Toaster renamed later", weight_g: 5 })).status).toBe(200);
    expect((await patch(`/v1/components/${renamed.components[0]!.id}`, { name: "Motor renamed later" })).status).toBe(200);
    expect((await api(`/v1/products/${removed.id}`, { method: "DELETE", headers: ada.headers })).status).toBe(204);
    const materials = (path: string) => `${path}/materials`;
    expect(
      (
        await api(`${materials(`/v1/products/${edited.id}`)}/${steel}`, {
          method: "PATCH",
          headers: { ...ada.headers, "content-type": "application/json" },
          body: JSON.stringify({ quantity: 9 }),
        })
      ).status,
    ).toBe(200);
    const addMaterial = await api(materials(`/v1/products/${edited.id}`), {
      method: "POST",
      headers: { ...ada.headers, "content-type": "application/json" },
      body: JSON.stringify([{ material_id: copper, quantity: 1, unit: "kg" }]),
    });
    expect(addMaterial.status, await addMaterial.clone().text()).toBe(201);
    await createProduct(ada.headers, { name: "Kettle created during the snapshot" });
    // A withdrawal after the instant leaves the release as it was.
    expect((await api("/v1/users/me/contributor-terms", { method: "DELETE", headers: ada.headers })).status).toBe(204);

    // A batch that dies copies nothing: its cursor and counts stay, and the retry copies the same range.
    const before = (await progress())!;
    await env.DB.prepare(
      "CREATE TRIGGER test_copy_dies BEFORE INSERT ON release_records BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
    ).run();
    try {
      expect((await slice()).kind).toBe("retry");
      expect(await progress()).toEqual(before);
    } finally {
      await env.DB.prepare("DROP TRIGGER test_copy_dies").run();
    }

    // The rest of the copy and the build; the held deletion finishes meanwhile.
    const outcomes: SliceOutcome["kind"][] = [];
    for (let i = 0; i < 60 && outcomes.at(-1) !== "published"; i++) {
      outcomes.push((await slice()).kind);
      if (((await progress())?.cursor ?? Number.POSITIVE_INFINITY) >= halfDeleted.id) {
        await env.DB.prepare("DROP TRIGGER IF EXISTS test_deletion_held").run();
      }
    }
    expect(outcomes.at(-1)).toBe("published");
    await finishDeletionJobs();
    expect(await deletionJobs()).toEqual([]);

    const release = (await (await readRelease(VERSION)).json()) as ReleaseBody;
    const records = await csvTable(VERSION, "records.csv");
    const names = records.map((r) => r.name).sort();
    expect(names).toEqual(
      [
        "Blender copied first",
        "Blender copied first: motor",
        "Toaster as it was",
        "Toaster as it was: motor",
        "Iron deleted during the snapshot",
        "Iron deleted during the snapshot: motor",
        "Mixer whose materials change",
        "Mixer whose materials change: motor",
        "Vacuum losing its brush",
        "Hose",
      ].sort(),
    );
    expect(release.counts).toMatchObject({ records: 10, base_products: 5, record_materials: 8 });
    const toaster = records.find((r) => r.id === String(renamed.id))!;
    expect(toaster.weight_g).toBe("");
    const bom = await csvTable(VERSION, "record_materials.csv");
    expect(bom).toHaveLength(8);
    const mixer = bom.filter((row) => row.record_id === String(edited.id));
    expect(mixer).toEqual([expect.objectContaining({ material_id: String(steel), quantity: "2", unit: "kg" })]);
    expect(bom.filter((row) => row.record_id === String(removed.id))).toHaveLength(1);
    // The copy's row went with the snapshot's end, and with it the triggers' work.
    expect(await progress()).toBeNull();
  });
});
