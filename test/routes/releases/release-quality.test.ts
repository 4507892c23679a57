import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { demoStatements } from "../../../scripts/seed/demo-data.mjs";
import { QUALITY_CHECK_CODES } from "../../../src/lib/record-quality";
import { encodeJpeg } from "../../support/image-fixtures";
import { scan, uploaded } from "../../support/media";
import { quality, statuses } from "../../support/quality";
import {
  adminHeaders,
  contributor,
  createProduct,
  duckdb,
  fileBytes,
  fileText,
  type ReleaseBody,
  requestRelease,
  settledRelease,
} from "../../support/releases";

// The quality table of a release (decisions.md, Record quality; docs/releases.md): built by the
// real queue from the demo dataset and a contributor's records, read back by DuckDB (its own
// Parquet and CSV readers, Node side), and compared row by row with what GET .../quality answers.

const VERSION = "3.0";
let published: ReleaseBody;
let files: Record<string, Uint8Array>;
let adaIds: number[];

beforeAll(async () => {
  const admin = await adminHeaders();
  // The demo contributor accepted the terms: its products are in the release.
  await env.DB.batch(demoStatements({ products: 12, seed: 8 }).map((statement) => env.DB.prepare(statement)));
  const ada = await contributor("adaquality", true);
  const made = await createProduct(ada.headers, {
    name: "Photographed fan",
    weight_g: 800,
    components: [{ name: "Blade", amount_in_parent: 3, weight_g: 100 }],
  });
  const image = await uploaded(`/v1/products/${made.id}/images`, ada.tokens.access_token, {
    bytes: encodeJpeg(16, 12, (x, y) => [x * 10, y * 10, 50]),
    name: "fan.jpg",
    type: "image/jpeg",
  });
  await scan("images", image.id);
  adaIds = [made.id, made.components[0]!.id];
  const requested = await requestRelease(admin, { version: VERSION, title: "Quality release" });
  expect(requested.status, await requested.clone().text()).toBe(202);
  published = await settledRelease(VERSION, admin);
  expect(published.status, published.failure_reason ?? "").toBe("published");
  files = {};
  for (const path of ["quality.csv", "quality.parquet", "records.parquet"]) files[path] = await fileBytes(VERSION, path);
}, 90_000);

describe("a release's quality table", () => {
  it("is read by DuckDB from Parquet and CSV alike: one row per record, typed, every record_id a record", async () => {
    const columns = await duckdb(files, "DESCRIBE SELECT * FROM '{dir}/quality.parquet'");
    expect(columns.map((c) => `${c.column_name} ${c.column_type}`)).toEqual([
      "record_id BIGINT",
      "score DOUBLE",
      ...QUALITY_CHECK_CODES.map((code) => `${code} VARCHAR`),
    ]);
    const [counts] = await duckdb(
      files,
      `SELECT count(*) AS rows, count(DISTINCT record_id) AS ids,
         (SELECT count(*) FROM '{dir}/quality.parquet' q ANTI JOIN '{dir}/records.parquet' r ON r.id = q.record_id) AS orphans,
         (SELECT count(*) FROM (SELECT * FROM '{dir}/quality.parquet' EXCEPT SELECT * FROM read_csv('{dir}/quality.csv', header = true))) AS only_parquet,
         (SELECT count(*) FROM (SELECT * FROM read_csv('{dir}/quality.csv', header = true) EXCEPT SELECT * FROM '{dir}/quality.parquet')) AS only_csv
       FROM '{dir}/quality.parquet'`,
    );
    expect(counts).toEqual({
      rows: String(published.counts.records),
      ids: String(published.counts.records),
      orphans: "0",
      only_parquet: "0",
      only_csv: "0",
    });
    const [values] = await duckdb(
      files,
      `SELECT count(*) FILTER (WHERE ${QUALITY_CHECK_CODES.map((code) => `${code} NOT IN ('pass', 'fail', 'not_applicable')`).join(" OR ")}) AS odd,
         min(score) AS low, max(score) AS high FROM '{dir}/quality.parquet'`,
    );
    expect(values!.odd).toBe("0");
    expect(Number(values!.low)).toBeGreaterThanOrEqual(0);
    expect(Number(values!.high)).toBeLessThanOrEqual(1);
  });

  it("holds for a sample of records what GET /v1/products|components/{id}/quality answers", async () => {
    const rows = await duckdb(
      files,
      `SELECT q.*, r.parent_id FROM '{dir}/quality.parquet' q JOIN '{dir}/records.parquet' r ON r.id = q.record_id
       WHERE q.record_id % 9 = 0 OR q.record_id IN (${adaIds.join(", ")}) ORDER BY q.record_id`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(15);
    for (const row of rows) {
      const id = Number(row.record_id);
      const live = await quality(row.parent_id === null ? "products" : "components", id);
      expect({ id, score: row.score, ...Object.fromEntries(QUALITY_CHECK_CODES.map((code) => [code, row[code]])) }).toEqual({
        id,
        score: live.score,
        ...statuses(live),
      });
    }
    // The contributor's photographed fan: its image counts; its blades (3 x 100 g) do not balance 800 g.
    const fan = rows.find((row) => Number(row.record_id) === adaIds[0]);
    expect(fan).toMatchObject({ has_image: "pass", components_mass_balance: "fail" });
  });

  it("is described in datapackage.json with a key to records, listed in SHA256SUMS, and summarised in README.md", async () => {
    const datapackage = JSON.parse(await fileText(VERSION, "datapackage.json")) as {
      resources: {
        name: string;
        path: string;
        schema: { fields: { name: string; type: string }[]; primaryKey: string[]; foreignKeys: unknown[] };
      }[];
    };
    // Each format's table points into the same format's records.
    for (const [name, path, records] of [
      ["quality", "quality.csv", "records"],
      ["quality-parquet", "quality.parquet", "records-parquet"],
    ]) {
      const resource = datapackage.resources.find((r) => r.name === name)!;
      expect(resource.path).toBe(path);
      expect(resource.schema.fields.map((f) => `${f.name}:${f.type}`)).toEqual([
        "record_id:integer",
        "score:number",
        ...QUALITY_CHECK_CODES.map((code) => `${code}:string`),
      ]);
      expect(resource.schema.primaryKey).toEqual(["record_id"]);
      expect(resource.schema.foreignKeys).toEqual([{ fields: ["record_id"], reference: { resource: records, fields: ["id"] } }]);
    }
    const sums = await fileText(VERSION, "SHA256SUMS");
    expect(sums).toMatch(/^[0-9a-f]{64} {2}quality\.csv$/m);
    expect(sums).toMatch(/^[0-9a-f]{64} {2}quality\.parquet$/m);

    const readme = await fileText(VERSION, "README.md");
    expect(readme).toContain("## Record quality");
    const [tally] = await duckdb(
      files,
      `SELECT ${QUALITY_CHECK_CODES.map((code) => `count(*) FILTER (WHERE ${code} = 'pass') AS ${code}_pass, count(*) FILTER (WHERE ${code} = 'fail') AS ${code}_fail`).join(", ")}, count(*) AS records
       FROM '{dir}/quality.parquet'`,
    );
    const records = Number(tally!.records);
    for (const code of QUALITY_CHECK_CODES) {
      const pass = Number(tally![`${code}_pass`]);
      const fail = Number(tally![`${code}_fail`]);
      const share = (part: number, whole: number) => (whole === 0 ? "–" : `${((part * 100) / whole).toFixed(1)} %`);
      expect(readme).toContain(
        `| \`${code}\` | ${pass} | ${fail} | ${records - pass - fail} | ${share(pass, records)} | ${share(pass, pass + fail)} |`,
      );
    }
  });
});
