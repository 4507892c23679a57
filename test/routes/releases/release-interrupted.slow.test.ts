import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { demoStatements } from "../../../scripts/seed/demo-data.mjs";
import { createLogger } from "../../../src/lib/logger";
import { buildServices } from "../../../src/services/platform/build-services";
import { MAX_BUILD_FAILURES, runBuildSlice, type SliceOutcome } from "../../../src/services/releases/build";
import { RELEASE_TABLES } from "../../../src/services/releases/tables";
import { buildRow, csvTable, keysUnder, type ReleaseBody, readRelease, runReleaseSlice, untilSnapshotTaken } from "../../support/releases";

// Slow tier: a build of more than one page of records, driven slice by slice through its service,
// interrupted in the middle of the records table (about 8 s).

/** Rows of records the build reads per page; the demo data makes about 15 records a product, so more than one page. */
const PAGE = RELEASE_TABLES.find((table) => table.name === "records")!.pageRows;
const DEMO_PRODUCTS = Math.ceil(PAGE / 10);

describe("a build that is interrupted", () => {
  const VERSION = "4.0";
  const BUILD = "build-interrupted";
  const svc = () => buildServices(env, { log: createLogger({ test: "release-interrupted" }) });
  const slice = (): Promise<SliceOutcome> => runBuildSlice(svc(), { version: VERSION, buildId: BUILD }, { deadline: 0 });

  /**
   * A building release and its first slices: the snapshot, the image files, the first page of
   * records, so that the build state is a checkpoint inside the records table (returned).
   */
  async function checkpointInRecords(version: string, buildId: string, run: () => Promise<SliceOutcome>) {
    await env.DB.prepare(
      "INSERT INTO releases (version, title, licence, status, base_url, build_id) VALUES (?, 'Interrupted', 'CC-BY-4.0', 'building', 'http://localhost', ?)",
    )
      .bind(version, buildId)
      .run();
    await untilSnapshotTaken(version, run);
    for (let i = 0; i < 2; i++) expect(await run()).toEqual({ kind: "continue" });
    const checkpoint = JSON.parse((await buildRow(version))!.build_state!);
    expect(checkpoint).toMatchObject({ step: 1, table: { rows: PAGE } });
    return checkpoint;
  }

  it("waits for a crashed slice's lease, restarts a table whose checkpoint was lost, and ends without duplicates", {
    timeout: 60_000,
  }, async () => {
    await env.DB.batch(demoStatements({ products: DEMO_PRODUCTS, seed: 5 }).map((s) => env.DB.prepare(s)));
    const expected = (await env.DB.prepare(
      "SELECT count(*) AS n FROM products p JOIN users u ON u.id = p.owner_id WHERE u.terms_accepted_version IS NOT NULL",
    ).first<{ n: number }>())!.n;
    expect(expected).toBeGreaterThan(PAGE);
    const checkpoint = await checkpointInRecords(VERSION, BUILD, slice);
    // The Parquet footer's metadata, which grows with the table, is in R2, not in the D1 row.
    const footerKey = `release-staging/${VERSION}/records.parquet.footer`;
    expect(checkpoint.table.parquet.writer.footer).toEqual({
      key: footerKey,
      bytes: expect.any(Number),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect((await env.UPLOADS.head(footerKey))?.size).toBe(checkpoint.table.parquet.writer.footer.bytes);

    // A slice took the lease and died: until its lease runs out, the build's message waits.
    await env.DB.prepare("UPDATE releases SET lease_id = 'a-dead-slice', lease_until = unixepoch() + 60 WHERE version = ?")
      .bind(VERSION)
      .run();
    expect(await runReleaseSlice(VERSION, BUILD)).toEqual({ acked: false, retried: true });
    // It had written a newer checkpoint of the CSV's tail than the state it never saved.
    await env.UPLOADS.put(`release-staging/${VERSION}/records.csv.tail`, new TextEncoder().encode("bytes of a later checkpoint"));
    await env.DB.prepare("UPDATE releases SET lease_until = unixepoch() - 1 WHERE version = ?").bind(VERSION).run();

    const retry = await slice();
    expect(retry.kind).toBe("retry");
    const row = (await buildRow(VERSION))!;
    expect(JSON.parse(row.build_state!)).toMatchObject({ step: 1, table: null });
    expect(row.lease_id).toBeNull();
    expect(
      (await env.DB.prepare("SELECT build_failures FROM releases WHERE version = ?").bind(VERSION).first<{ build_failures: number }>())!
        .build_failures,
    ).toBe(1);
    expect(MAX_BUILD_FAILURES).toBeGreaterThan(1);

    const outcomes: SliceOutcome["kind"][] = [];
    for (let i = 0; i < 40 && outcomes.at(-1) !== "published"; i++) outcomes.push((await slice()).kind);
    expect(outcomes.at(-1)).toBe("published");
    const release = (await (await readRelease(VERSION)).json()) as ReleaseBody;
    expect(release.counts.records).toBe(expected);
    const records = await csvTable(VERSION, "records.csv");
    expect(records).toHaveLength(expected);
    expect(new Set(records.map((r) => r.id)).size).toBe(expected);
    expect(await keysUnder(`release-staging/${VERSION}/`)).toEqual([]);
  });

  it("restarts a table whose stored Parquet footer is gone, as one whose tail is", { timeout: 60_000 }, async () => {
    const version = "4.1";
    const build = "build-footer-lost";
    const footerSlice = (): Promise<SliceOutcome> => runBuildSlice(svc(), { version, buildId: build }, { deadline: 0 });
    const checkpoint = await checkpointInRecords(version, build, footerSlice);
    // Lost (R2 lost it, or a slice that died had replaced it): the checkpoint cannot be continued.
    await env.UPLOADS.delete(checkpoint.table.parquet.writer.footer.key);
    expect((await footerSlice()).kind).toBe("retry");
    expect(JSON.parse((await buildRow(version))!.build_state!)).toMatchObject({ step: 1, table: null });
  });
});
