import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/lib/logger";
import { buildServices } from "../../../src/services/platform/build-services";
import { runBuildSlice, type SliceOutcome } from "../../../src/services/releases/build";
import { api } from "../../support/http";
import { adminHeaders, contributor, createProduct, csvTable, type ReleaseBody, readRelease } from "../../support/releases";

// The snapshot against writes that land after it, on a small dataset: the build is driven slice by
// slice through its service (the queue consumer runs the same function), one unit of work per
// slice, and the writes land between the snapshot slice and the slices that write the files.
// release-snapshot.slow.test.ts does the same in the middle of a records table of several pages.

const VERSION = "2.1";
const BUILD = "build-small-snapshot";
const svc = () => buildServices(env, { log: createLogger({ test: "release-snapshot" }) });
const slice = (): Promise<SliceOutcome> => runBuildSlice(svc(), { version: VERSION, buildId: BUILD }, { deadline: 0 });

let ada: Awaited<ReturnType<typeof contributor>>;
let kept: { id: number; components: { id: number }[] };
let removed: { id: number };

beforeAll(async () => {
  await adminHeaders();
  ada = await contributor("snapsmall", true);
  kept = await createProduct(ada.headers, {
    name: "Kettle before the snapshot",
    weight_g: 900,
    components: [{ name: "Heating element", amount_in_parent: 1 }],
  });
  removed = await createProduct(ada.headers, { name: "Fan deleted after the snapshot" });
  await env.DB.prepare(
    "INSERT INTO releases (version, title, licence, status, base_url, build_id) VALUES (?, 'Small snapshot', 'CC-BY-4.0', 'building', 'http://localhost', ?)",
  )
    .bind(VERSION, BUILD)
    .run();
}, 30_000);

describe("a release's snapshot", () => {
  it("holds the dataset as it was when the snapshot slice ran, whatever lands before the files are written", async () => {
    expect(await slice()).toEqual({ kind: "continue" });

    const renamed = await api(`/v1/products/${kept.id}`, {
      method: "PATCH",
      headers: { ...ada.headers, "content-type": "application/json", "if-match": '"1"' },
      body: JSON.stringify({ name: "Kettle renamed after the snapshot", weight_g: 1 }),
    });
    expect(renamed.status, await renamed.clone().text()).toBe(200);
    expect((await api(`/v1/products/${removed.id}`, { method: "DELETE", headers: ada.headers })).status).toBe(204);
    await createProduct(ada.headers, { name: "Created after the snapshot" });
    const late = await contributor("snaplate", true);
    await createProduct(late.headers, { name: "A late contributor's toaster" });
    expect((await api("/v1/users/me/contributor-terms", { method: "DELETE", headers: ada.headers })).status).toBe(204);

    const outcomes: SliceOutcome["kind"][] = [];
    for (let i = 0; i < 30 && outcomes.at(-1) !== "published"; i++) outcomes.push((await slice()).kind);
    expect(outcomes.at(-1)).toBe("published");

    const release = (await (await readRelease(VERSION)).json()) as ReleaseBody;
    expect(release.counts).toMatchObject({ records: 3, base_products: 2 });
    const records = await csvTable(VERSION, "records.csv");
    expect(records.map((r) => r.name).sort()).toEqual(["Fan deleted after the snapshot", "Heating element", "Kettle before the snapshot"]);
    expect(records.find((r) => r.id === String(kept.id))!.weight_g).toBe("900");
    expect(new Set(records.map((r) => r.owner_pseudonym)).size).toBe(1);
  });
});
