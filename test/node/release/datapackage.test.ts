import { describe, expect, it } from "vitest";
import type { Column } from "../../../src/lib/release/columns.ts";
import {
  buildDataPackage,
  type DataPackage,
  type DataPackageInput,
  dataPackageJson,
  type ResourceInput,
  type TableInput,
  tableResources,
} from "../../../src/lib/release/datapackage.ts";
import { licence } from "../../../src/lib/release/licences.ts";
import { releaseReadme } from "../../../src/lib/release/readme.ts";
import { sha256sums } from "../../../src/lib/release/sha256sums.ts";

const hash = (n: number) => n.toString(16).padStart(64, "0");
const file = (path: string, n: number) => ({ path, bytes: 1000 + n, sha256: hash(n) });

const id: Column = { name: "id", type: "int64", nullable: false };
const TABLES: TableInput[] = [
  {
    name: "records",
    title: "Products and components",
    schema: {
      columns: [
        id,
        { name: "parent_id", type: "int64" },
        { name: "product_type_id", type: "int64" },
        { name: "name", type: "string", nullable: false },
      ],
      primaryKey: ["id"],
      foreignKeys: [
        { fields: ["parent_id"], reference: { fields: ["id"] } },
        { fields: ["product_type_id"], reference: { resource: "product_types", fields: ["id"] } },
      ],
    },
  },
  {
    name: "record_materials",
    schema: {
      columns: [
        { name: "record_id", type: "int64", nullable: false },
        { name: "material_id", type: "int64", nullable: false },
        { name: "quantity", type: "double", nullable: false },
        { name: "unit", type: "string" },
      ],
      primaryKey: ["record_id", "material_id"],
      foreignKeys: [
        { fields: ["record_id"], reference: { resource: "records", fields: ["id"] } },
        { fields: ["material_id"], reference: { resource: "materials", fields: ["id"] } },
        { fields: ["unit"], reference: { resource: "units", fields: ["code"] } },
      ],
    },
  },
  { name: "materials", schema: { columns: [id, { name: "is_crm", type: "boolean", nullable: false }], primaryKey: ["id"] } },
  { name: "product_types", schema: { columns: [id, { name: "name", type: "string" }], primaryKey: ["id"] } },
  {
    name: "units",
    schema: { columns: [{ name: "code", type: "string", nullable: false, description: "e.g. kg" }], primaryKey: ["code"] },
  },
];

function resources(): ResourceInput[] {
  const tabular = TABLES.flatMap((table, i) => {
    const dir = table.name.startsWith("record") ? "" : "reference/";
    return tableResources(table, file(`${dir}${table.name}.csv`, 2 * i), file(`${dir}${table.name}.parquet`, 2 * i + 1));
  });
  return [...tabular, { name: "readme", path: "README.md", format: "md", mediatype: "text/markdown", bytes: 5, sha256: hash(99) }];
}

const INPUT: DataPackageInput = {
  name: "relab",
  version: "1.0.0",
  title: "relab dataset",
  description: "Products taken apart for study.",
  created: new Date(Date.UTC(2026, 4, 1, 12, 0, 0)),
  url: "https://api.example.org/v1/releases/1.0.0",
  licences: [licence("CC-BY-4.0")],
  keywords: ["circularity"],
  resources: resources(),
};

/** This test's own check of what a consumer relies on: every foreign key resolves in the package. */
function unresolvedForeignKeys(pkg: DataPackage): string[] {
  const problems: string[] = [];
  const byName = new Map(pkg.resources.map((r) => [r.name, r]));
  for (const resource of pkg.resources) {
    const own = new Set(resource.schema?.fields.map((f) => f.name));
    for (const key of resource.schema?.foreignKeys ?? []) {
      const target = key.reference.resource === undefined ? resource : byName.get(key.reference.resource);
      const targetFields = new Set(target?.schema?.fields.map((f) => f.name));
      if (!target || key.fields.some((f) => !own.has(f)) || key.reference.fields.some((f) => !targetFields.has(f))) {
        problems.push(`${resource.name}: ${key.fields.join(",")}`);
      }
      if (target && target.format !== resource.format) problems.push(`${resource.name} crosses formats`);
    }
  }
  return problems;
}

describe("buildDataPackage", () => {
  it("describes every file as a Data Package v2 with hashes, types, keys and closed foreign keys", () => {
    const pkg = buildDataPackage(INPUT);
    expect(pkg).toMatchObject({
      $schema: "https://datapackage.org/profiles/2.0/datapackage.json",
      name: "relab",
      id: INPUT.url,
      homepage: INPUT.url,
      version: "1.0.0",
      created: "2026-05-01T12:00:00Z",
      licenses: [
        { name: "CC-BY-4.0", path: "https://creativecommons.org/licenses/by/4.0/", title: expect.stringContaining("Attribution 4.0") },
      ],
    });
    expect(pkg.resources).toHaveLength(11);
    for (const resource of pkg.resources) {
      expect(Object.keys(resource)).toEqual(expect.arrayContaining(["name", "path", "format", "mediatype", "bytes", "hash"]));
      expect(resource.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(resource.name).toMatch(/^[a-z0-9._-]+$/);
    }
    expect(new Set(pkg.resources.map((r) => r.name)).size).toBe(pkg.resources.length);
    expect(unresolvedForeignKeys(pkg)).toEqual([]);

    const records = pkg.resources.find((r) => r.name === "records")!;
    expect(records).toMatchObject({ type: "table", path: "records.csv", format: "csv", mediatype: "text/csv", encoding: "utf-8" });
    expect(records.schema!.fields).toEqual([
      { name: "id", type: "integer", constraints: { required: true } },
      { name: "parent_id", type: "integer" },
      { name: "product_type_id", type: "integer" },
      { name: "name", type: "string", constraints: { required: true } },
    ]);
    expect(records.schema!.foreignKeys).toEqual([
      { fields: ["parent_id"], reference: { fields: ["id"] } },
      { fields: ["product_type_id"], reference: { resource: "product_types", fields: ["id"] } },
    ]);
    const parquet = pkg.resources.find((r) => r.name === "record_materials-parquet")!;
    expect(parquet).toMatchObject({ path: "record_materials.parquet", format: "parquet", mediatype: "application/vnd.apache.parquet" });
    expect(parquet.encoding).toBeUndefined();
    expect(parquet.schema!.foreignKeys!.map((k) => k.reference.resource)).toEqual([
      "records-parquet",
      "materials-parquet",
      "units-parquet",
    ]);
    expect(pkg.resources.find((r) => r.name === "units")!.schema!.fields[0]).toMatchObject({ description: "e.g. kg" });
    expect(pkg.resources.find((r) => r.name === "materials")!.schema!.fields[1]!.type).toBe("boolean");
    const readme = pkg.resources.find((r) => r.name === "readme")!;
    expect(readme.type).toBeUndefined();
    expect(readme.schema).toBeUndefined();
    expect(JSON.parse(dataPackageJson(INPUT))).toEqual(pkg);
    expect(dataPackageJson(INPUT).endsWith("}\n")).toBe(true);
  });

  it("refuses a package with a foreign key that does not resolve inside it", () => {
    const without = INPUT.resources.filter((r) => !r.name.startsWith("units"));
    expect(() => buildDataPackage({ ...INPUT, resources: without })).toThrow(
      'resource "record_materials" foreignKeys[2] references "units", which is not a table here',
    );
    const [records] = INPUT.resources;
    const bad = (foreignKeys: NonNullable<ResourceInput["schema"]>["foreignKeys"]) => ({
      ...INPUT,
      resources: [{ ...records!, schema: { ...records!.schema!, foreignKeys } }, ...INPUT.resources.slice(1)],
    });
    expect(() => buildDataPackage(bad([{ fields: ["nope"], reference: { fields: ["id"] } }]))).toThrow('names "nope"');
    expect(() => buildDataPackage(bad([{ fields: ["parent_id"], reference: { fields: ["name"] } }]))).toThrow(
      'does not reference the primary key of "records"',
    );
    expect(() => buildDataPackage(bad([{ fields: ["parent_id"], reference: { resource: "product_types", fields: ["name"] } }]))).toThrow(
      "does not reference the primary key",
    );
    expect(() => buildDataPackage(bad([{ fields: ["parent_id", "id"], reference: { fields: ["id"] } }]))).toThrow("field counts differ");
  });

  it("refuses duplicate names and paths, paths leaving the release, and bad hashes or sizes", () => {
    const [first, ...rest] = INPUT.resources;
    const withFirst = (change: Partial<ResourceInput>) => ({ ...INPUT, resources: [{ ...first!, ...change }, ...rest] });
    expect(() => buildDataPackage(withFirst({ name: "records-parquet" }))).toThrow("appears twice");
    expect(() => buildDataPackage(withFirst({ path: "records.parquet" }))).toThrow("appears twice");
    for (const path of ["../records.csv", "/records.csv", "a//b.csv", "a\\b.csv", "./x.csv"]) {
      expect(() => buildDataPackage(withFirst({ path }))).toThrow("relative path inside the release");
    }
    expect(() => buildDataPackage(withFirst({ sha256: "ABC" }))).toThrow("64 lower-case hex digits");
    expect(() => buildDataPackage(withFirst({ bytes: -1 }))).toThrow("bytes must be a count");
    expect(() => buildDataPackage(withFirst({ name: "Records" }))).toThrow("lower-case");
    expect(() => buildDataPackage({ ...INPUT, licences: [] })).toThrow("needs a licence");
    expect(() => buildDataPackage({ ...INPUT, resources: [] })).toThrow("at least one resource");
  });
});

describe("licence", () => {
  it("knows the common open data licences and needs path and title for others", () => {
    expect(licence("CC0-1.0").path).toBe("https://creativecommons.org/publicdomain/zero/1.0/");
    expect(licence("MIT", { path: "https://spdx.org/licenses/MIT.html", title: "MIT License" })).toEqual({
      name: "MIT",
      path: "https://spdx.org/licenses/MIT.html",
      title: "MIT License",
    });
    expect(() => licence("MIT")).toThrow("give its path and title");
    expect(() => licence("CC BY")).toThrow("not an SPDX licence identifier");
  });
});

describe("sha256sums", () => {
  it("lists files in sha256sum's format, sorted by path", () => {
    expect(sha256sums([file("records.parquet", 2), file("README.md", 3), file("images/ab.jpg", 1), file("records.csv", 4)])).toBe(
      `${hash(3)}  README.md\n${hash(1)}  images/ab.jpg\n${hash(4)}  records.csv\n${hash(2)}  records.parquet\n`,
    );
    expect(sha256sums([])).toBe("");
  });

  it("refuses what sha256sum -c would misread", () => {
    expect(() => sha256sums([file("a.csv", 1), file("a.csv", 2)])).toThrow("listed twice");
    expect(() => sha256sums([{ path: "a.csv", sha256: "xyz" }])).toThrow("64 lower-case hex digits");
    for (const path of ["a\nb.csv", "a\\b.csv", "/etc/passwd", ""]) {
      expect(() => sha256sums([{ path, sha256: hash(1) }])).toThrow("cannot be listed");
    }
  });
});

describe("releaseReadme", () => {
  it("says what the release is, how to cite, check and open it", () => {
    const readme = releaseReadme({
      title: "relab dataset: products & 100% of their parts",
      version: "1.0.0",
      description: "Every product taken apart on relab whose owner agreed to share it.",
      publisher: "Reverse Engineering Lab",
      snapshotAt: new Date(Date.UTC(2026, 4, 1, 12, 0, 0)),
      url: "https://api.example.org/v1/releases/1.0.0",
      filesUrl: "https://api.example.org/v1/releases/1.0.0/files/",
      licence: licence("CC-BY-4.0"),
      files: [
        { path: "records.csv", bytes: 15_234_567, description: "products | components" },
        { path: "records.parquet", bytes: 6_000_000 },
      ],
    });
    expect(readme).toContain("# relab dataset: products & 100% of their parts\n");
    expect(readme).toContain("Version 1.0.0, a snapshot of the data as it stood at 2026-05-01T12:00:00Z.");
    expect(readme).toContain(
      "> Reverse Engineering Lab (2026). *relab dataset: products & 100% of their parts* (Version 1.0.0) [Data set]. https://api.example.org/v1/releases/1.0.0",
    );
    expect(readme).toContain("@misc{reverse_engineering_lab_1_0_0,");
    expect(readme).toContain("title     = {{relab dataset: products \\& 100\\% of their parts}},");
    expect(readme).toContain(
      "[Creative Commons Attribution 4.0 International](https://creativecommons.org/licenses/by/4.0/) (`CC-BY-4.0`)",
    );
    expect(readme).toContain("| `records.csv` | 15,234,567 | products \\| components |");
    expect(readme).toContain("sha256sum -c SHA256SUMS");
    expect(readme).toContain('pd.read_parquet("https://api.example.org/v1/releases/1.0.0/files/records.parquet")');
    expect(readme).toContain("SELECT count(*) FROM 'https://api.example.org/v1/releases/1.0.0/files/records.parquet';");
  });
});
