import { env } from "cloudflare:workers";
import { asyncBufferFromUrl, parquetMetadataAsync, parquetReadObjects } from "hyparquet";
import { beforeAll, describe, expect, it } from "vitest";
import { demoStatements } from "../../../scripts/seed/demo-data.mjs";
import { createLogger } from "../../../src/lib/logger";
import { buildServices } from "../../../src/services/platform/build-services";
import { runBuildSlice, type SliceOutcome } from "../../../src/services/releases/build";
import { RELEASE_TABLES } from "../../../src/services/releases/tables";
import { api, expectProblem } from "../../support/http";
import {
  adminHeaders,
  contributor,
  createProduct,
  csvTable,
  type ReleaseBody,
  readRelease,
  untilSnapshotTaken,
  workerFetch,
} from "../../support/releases";

/** Rows of records the build reads per page; the demo data makes about 15 records a product, so more than one page. */
const PAGE = RELEASE_TABLES.find((table) => table.name === "records")!.pageRows;
const DEMO_PRODUCTS = Math.ceil(PAGE / 10);

// Slow tier: a build of more than one page of records, one unit of work per slice (about 8 s).
// The build driven slice by slice through its service (the queue consumer runs the same function
// and queues the next slice itself), so that the test can act between two slices: after the
// snapshot batch, and in the middle of the records table. Real D1, R2 and HTTP surface throughout.

const VERSION = "2.0";
const BUILD = "build-snapshot-test";
const svc = () => buildServices(env, { log: createLogger({ test: "release-snapshot" }) });
/** A deadline already past: every slice does one unit of work (the snapshot, a step, a page) and stops. */
const slice = (): Promise<SliceOutcome> => runBuildSlice(svc(), { version: VERSION, buildId: BUILD }, { deadline: 0 });

let admin: Record<string, string>;
let ada: Awaited<ReturnType<typeof contributor>>;
let kept: { id: number; components: { id: number }[] };
let removed: { id: number };
let snapshotRecords: number;

beforeAll(async () => {
  admin = await adminHeaders();
  ada = await contributor("snap", true);
  // ~4,400 records of the demo contributor (who accepted the terms): more than one page of records.
  await env.DB.batch(demoStatements({ products: DEMO_PRODUCTS, seed: 11 }).map((s) => env.DB.prepare(s)));
  kept = await createProduct(ada.headers, {
    name: "Radio before the snapshot",
    weight_g: 700,
    components: [{ name: "Speaker", amount_in_parent: 2 }],
  });
  removed = await createProduct(ada.headers, { name: "Lamp deleted after the snapshot" });
  // Everyone who owns records here accepted the terms: every record is in the snapshot.
  snapshotRecords = (await env.DB.prepare("SELECT count(*) AS n FROM products").first<{ n: number }>())!.n;
  // A release row as POST /v1/admin/releases makes it, but without a queue message: this test is the queue.
  await env.DB.prepare(
    "INSERT INTO releases (version, title, licence, status, base_url, build_id) VALUES (?, 'Snapshot test', 'CC-BY-4.0', 'building', 'http://localhost', ?)",
  )
    .bind(VERSION, BUILD)
    .run();
}, 60_000);

describe("a release's snapshot", () => {
  it("is taken in the first slices; the release is hidden from all but superusers while it builds", async () => {
    // Its instant, a batch per 10,000 records of whole base products, the counts.
    const slices = await untilSnapshotTaken(VERSION, slice);
    expect(slices).toBeGreaterThanOrEqual(3);
    expect(slices).toBeLessThanOrEqual(2 + Math.ceil(snapshotRecords / 10_000));
    const building = (await (await readRelease(VERSION, admin)).json()) as ReleaseBody;
    expect(building).toMatchObject({ status: "building", published_at: null, files: [], progress: { records_written: 0 } });
    expect(building.snapshot_at).not.toBeNull();
    expect(building.counts.records).toBe(snapshotRecords);
    await expectProblem(await readRelease(VERSION), 404, "NOT_FOUND");
    await expectProblem(await readRelease(VERSION, ada.headers), 404, "NOT_FOUND");
    expect(await (await api("/v1/releases")).json()).toMatchObject({ items: [], total: 0 });
    expect(await (await api("/v1/releases", { headers: admin })).json()).toMatchObject({ total: 1 });
    await expectProblem(await api("/v1/releases/latest"), 404, "NOT_FOUND");
  });

  it("is not disturbed by edits, creates, deletions and withdrawals that land while the files are written", {
    timeout: 60_000,
  }, async () => {
    // Into the records table: one page written, the rest waiting for the next slice.
    let outcome = await slice(); // the image files (none)
    outcome = await slice(); // the first page of records
    expect(outcome).toEqual({ kind: "continue" });
    const midway = (await (await readRelease(VERSION, admin)).json()) as ReleaseBody;
    expect(midway.progress.records_written).toBe(PAGE);
    expect(midway.progress.records_written).toBeLessThan(midway.counts.records!);

    const renamed = await api(`/v1/products/${kept.id}`, {
      method: "PATCH",
      headers: { ...ada.headers, "content-type": "application/json", "if-match": '"1"' },
      body: JSON.stringify({ name: "Radio renamed after the snapshot", weight_g: 999 }),
    });
    expect(renamed.status, await renamed.clone().text()).toBe(200);
    expect((await api(`/v1/products/${removed.id}`, { method: "DELETE", headers: ada.headers })).status).toBe(204);
    await createProduct(ada.headers, { name: "Created after the snapshot" });
    const late = await contributor("late", true);
    await createProduct(late.headers, { name: "A late contributor's drill" });
    expect((await api("/v1/users/me/contributor-terms", { method: "DELETE", headers: ada.headers })).status).toBe(204);
    await env.DB.prepare("DELETE FROM bill_of_materials WHERE product_id IN (SELECT id FROM products WHERE owner_id <> ?)")
      .bind(ada.id)
      .run();

    const outcomes: SliceOutcome["kind"][] = [];
    for (let i = 0; i < 40 && outcomes.at(-1) !== "published"; i++) outcomes.push((await slice()).kind);
    expect(outcomes.at(-1)).toBe("published");
    expect(outcomes.slice(0, -1).every((kind) => kind === "continue")).toBe(true);

    const release = (await (await readRelease(VERSION)).json()) as ReleaseBody;
    expect(release.counts.records).toBe(snapshotRecords);
    expect(release.progress.records_written).toBe(snapshotRecords);
    const records = await csvTable(VERSION, "records.csv");
    expect(records).toHaveLength(snapshotRecords);
    const names = new Set(records.map((r) => r.name));
    expect(names.has("Radio before the snapshot")).toBe(true);
    expect(names.has("Radio renamed after the snapshot")).toBe(false);
    expect(records.find((r) => r.id === String(kept.id))!.weight_g).toBe("700");
    expect(names.has("Lamp deleted after the snapshot")).toBe(true);
    expect(names.has("Created after the snapshot")).toBe(false);
    expect(names.has("A late contributor's drill")).toBe(false);
    expect(new Set(records.map((r) => r.id)).size).toBe(snapshotRecords);
    // The bills of materials as they were: the demo products' entries are all there.
    expect((await csvTable(VERSION, "record_materials.csv")).length).toBe(release.counts.record_materials);
    expect(release.counts.record_materials).toBeGreaterThan(4_000);
  });

  it("gives a records file continued across slices that readers open whole", async () => {
    const requests: { method: string; range: string | null; status: number }[] = [];
    const file = await asyncBufferFromUrl({
      url: `http://localhost/v1/releases/${VERSION}/files/records.parquet`,
      fetch: workerFetch(requests),
    });
    const metadata = await parquetMetadataAsync(file);
    // The checkpoint between the slices ended a row group early.
    expect(metadata.row_groups.length).toBe(2);
    expect(Number(metadata.row_groups[0]!.num_rows)).toBe(PAGE);
    const rows = await parquetReadObjects({ file, metadata, columns: ["id", "weight_g", "parent_id"] });
    const csv = await csvTable(VERSION, "records.csv");
    expect(rows).toHaveLength(csv.length);
    const sum = (values: unknown[]) => values.reduce<number>((total, value) => total + Number(value ?? 0), 0);
    expect(sum(rows.map((r) => r.id))).toBe(sum(csv.map((r) => r.id)));
    expect(sum(rows.map((r) => r.weight_g))).toBeCloseTo(sum(csv.map((r) => r.weight_g || 0)), 6);
    expect(sum(rows.map((r) => r.parent_id))).toBe(sum(csv.map((r) => r.parent_id || 0)));
    const csvText = await (await api(`/v1/releases/${VERSION}/files/records.csv`)).text();
    expect(csvText.split("\r\n").filter((line) => line.startsWith("id,parent_id,"))).toHaveLength(1);
  });

  it("ignores a message of an attempt that is not the release's", async () => {
    expect(await runBuildSlice(svc(), { version: VERSION, buildId: "another-attempt" }, { deadline: Date.now() + 10_000 })).toEqual({
      kind: "stale",
    });
    expect(await slice()).toEqual({ kind: "stale" });
  });
});
