import { asyncBufferFromUrl, parquetMetadataAsync, parquetReadObjects } from "hyparquet";
import { beforeAll, describe, expect, it } from "vitest";
import { api, expectProblem, roundTrips } from "../../support/http";
import { encodeJpeg } from "../../support/image-fixtures";
import { scan, uploaded } from "../../support/media";
import {
  adminHeaders,
  contributor,
  createProduct,
  csvTable,
  fileBytes,
  fileText,
  type ReleaseBody,
  readRelease,
  referenceRow,
  requestRelease,
  settledRelease,
  sha256Hex,
  workerFetch,
} from "../../support/releases";

// One release built by the real queue from a small dataset: one contributor who accepted the
// terms, one who never did, one who withdrew. Read back through the public routes only.

const VERSION = "1.0";
let admin: Record<string, string>;
let ada: Awaited<ReturnType<typeof contributor>>;
let bob: Awaited<ReturnType<typeof contributor>>;
let cy: Awaited<ReturnType<typeof contributor>>;
let adaProduct: { id: number; components: { id: number }[] };
let published: ReleaseBody;
let steel: number;
let copper: number;

beforeAll(async () => {
  admin = await adminHeaders();
  [ada, bob, cy] = [await contributor("ada", true), await contributor("bob", false), await contributor("cy", true)];
  steel = await referenceRow("materials", "Steel (release test)");
  copper = await referenceRow("materials", "Copper (release test)");
  const kettles = await referenceRow("product_types", "Kettle (release test)");
  adaProduct = await createProduct(ada.headers, {
    name: "Electric kettle",
    description: '=HYPERLINK("x") taken apart, "carefully", in two sessions',
    brand: "Norvik",
    model: "K-200",
    weight_g: 1250.5,
    height_cm: 24,
    width_cm: 16,
    depth_cm: 20,
    product_type_id: kettles,
    circularity_properties: { recyclability: "Steel body, easy to sort" },
    bill_of_materials: [{ material_id: steel, quantity: 0.8, unit: "kg" }],
    components: [
      {
        name: "Heating element",
        amount_in_parent: 1,
        weight_g: 210,
        bill_of_materials: [{ material_id: copper, quantity: 120, unit: "g" }],
      },
      {
        name: "Lid",
        amount_in_parent: 1,
        components: [
          {
            name: "Hinge screw",
            amount_in_parent: 4,
            weight_g: 1.5,
            bill_of_materials: [{ material_id: steel, quantity: 1.5, unit: "g" }],
          },
        ],
      },
    ],
  });
  await createProduct(ada.headers, { name: "Toaster", weight_g: 900 });
  await createProduct(bob.headers, { name: "Bob's hair dryer", weight_g: 500, components: [{ name: "Fan", amount_in_parent: 1 }] });
  await createProduct(cy.headers, { name: "Cy's blender", weight_g: 1800 });
  expect((await api("/v1/users/me/contributor-terms", { method: "DELETE", headers: cy.headers })).status).toBe(204);
  for (const [path, record, colour] of [
    ["products", adaProduct.id, 40],
    ["components", adaProduct.components[0]!.id, 200],
  ] as const) {
    const image = await uploaded(`/v1/${path}/${record}/images`, ada.tokens.access_token, {
      bytes: encodeJpeg(64, 48, (x, y) => [colour, x * 3, y * 4]),
      name: `ada-${record}-private-name.jpg`,
      type: "image/jpeg",
    });
    await scan("images", image.id);
  }

  const created = await requestRelease(admin, { version: VERSION, title: "relab test release", description: "Built by the tests." });
  expect(created.status, await created.clone().text()).toBe(202);
  const body = (await created.json()) as ReleaseBody;
  expect(body).toMatchObject({
    version: VERSION,
    status: "building",
    licence: "CC-BY-4.0",
    snapshot_at: null,
    files: [],
    published_at: null,
  });
  expect(created.headers.get("location")).toBe(`http://localhost/v1/releases/${VERSION}`);
  published = await settledRelease(VERSION, admin);
}, 90_000);

describe("a release built on the queue", () => {
  it("is published with the snapshot's counts, its files listed, and public", async () => {
    expect(published.status, published.failure_reason ?? "").toBe("published");
    expect(published.counts).toEqual({ records: 5, base_products: 2, images: 2, record_materials: 3 });
    expect(published.progress.records_written).toBe(5);
    expect(published.citation).toBe(
      `relab (${published.snapshot_at!.slice(0, 4)}). relab test release (Version 1.0) [Data set]. http://localhost/v1/releases/1.0`,
    );
    const tables = [
      "records",
      "record_materials",
      "images",
      ...["taxonomies", "categories", "materials", "product_types", "units"].map((t) => `reference/${t}`),
      "quality",
    ];
    expect(published.files.map((f) => f.path).sort()).toEqual(
      [...tables.flatMap((t) => [`${t}.csv`, `${t}.parquet`]), "CITATION.cff", "README.md", "SHA256SUMS", "datapackage.json"].sort(),
    );
    for (const file of published.files) expect(file.url).toBe(`http://localhost/v1/releases/${VERSION}/files/${file.path}`);

    const anonymous = await readRelease(VERSION);
    expect(anonymous.status).toBe(200);
    expect(roundTrips(anonymous)).toBe(1);
    expect(await anonymous.json()).toEqual(published);
    // Signed in, the token check travels with the read; a superuser's is read again as one, who
    // may see unpublished releases too, unless their own cached copy (from the polls above) is
    // current: then the check and the validator are the only round trip.
    const signedIn = await readRelease(VERSION, ada.headers);
    expect(roundTrips(signedIn)).toBe(1);
    expect(await signedIn.json()).toEqual(published);
    const asSuperuser = await readRelease(VERSION, admin);
    expect(roundTrips(asSuperuser)).toBe(asSuperuser.headers.get("x-cache") === "hit" ? 1 : 2);
    expect(await asSuperuser.json()).toEqual(published);
    const file = await api(`/v1/releases/${VERSION}/files/README.md`, { headers: ada.headers });
    expect(file.status).toBe(200);
    expect(roundTrips(file)).toBe(1);
    const latest = await api("/v1/releases/latest");
    expect(await latest.json()).toEqual(published);
    const list = await api("/v1/releases");
    expect(roundTrips(list)).toBe(1);
    const page = (await list.json()) as { items: Record<string, unknown>[]; total: number };
    expect(page.total).toBe(1);
    const { files: _files, ...summary } = published;
    expect(page.items).toEqual([summary]);
  });

  it("holds the consenting owners' base products with every component, and nobody else's", async () => {
    const records = await csvTable(VERSION, "records.csv");
    expect(Object.keys(records[0]!)).toEqual([
      "id",
      "parent_id",
      "amount_in_parent",
      "owner_pseudonym",
      "name",
      "description",
      "brand",
      "model",
      "product_type_id",
      "weight_g",
      "height_cm",
      "width_cm",
      "depth_cm",
      "volume_cm3",
      "circularity_properties",
      "created_at",
      "updated_at",
    ]);
    expect(records.map((r) => r.name).sort()).toEqual(["Electric kettle", "Heating element", "Hinge screw", "Lid", "Toaster"]);
    const kettle = records.find((r) => r.id === String(adaProduct.id))!;
    expect(kettle).toMatchObject({
      parent_id: "",
      amount_in_parent: "",
      description: '\'=HYPERLINK("x") taken apart, "carefully", in two sessions',
      brand: "norvik",
      weight_g: "1250.5",
      volume_cm3: "7680",
      circularity_properties: '{"recyclability":"Steel body, easy to sort","disassemblability":null,"remanufacturability":null}',
    });
    expect(kettle.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // Every record of Ada carries one pseudonym; it says nothing of her.
    expect(new Set(records.map((r) => r.owner_pseudonym))).toEqual(new Set([kettle.owner_pseudonym]));
    expect(kettle.owner_pseudonym).toMatch(/^o_[0-9a-f]{32}$/);
  });

  it("names no username, email address or uploaded file name in any file", async () => {
    const secrets = [ada, bob, cy]
      .flatMap((u) => [u.username, u.email, String(u.email.split("@")[0])])
      .concat(["private-name", "admin@relab.test"]);
    for (const file of published.files) {
      const text = new TextDecoder().decode(await fileBytes(VERSION, file.path));
      for (const secret of secrets) expect(text.includes(secret), `${secret} in ${file.path}`).toBe(false);
    }
  });

  it("closes every foreign key inside the release", async () => {
    const records = await csvTable(VERSION, "records.csv");
    const materials = await csvTable(VERSION, "record_materials.csv");
    const images = await csvTable(VERSION, "images.csv");
    const ids = new Set(records.map((r) => r.id));
    const types = new Set((await csvTable(VERSION, "reference/product_types.csv")).map((r) => r.id));
    const materialIds = new Set((await csvTable(VERSION, "reference/materials.csv")).map((r) => r.id));
    const units = new Set((await csvTable(VERSION, "reference/units.csv")).map((r) => r.code));
    const categories = await csvTable(VERSION, "reference/categories.csv");
    const categoryIds = new Set(categories.map((r) => r.id));
    const taxonomies = new Set((await csvTable(VERSION, "reference/taxonomies.csv")).map((r) => r.id));
    for (const r of records) {
      if (r.parent_id) expect(ids.has(r.parent_id), `parent ${r.parent_id}`).toBe(true);
      if (r.product_type_id) expect(types.has(r.product_type_id)).toBe(true);
    }
    expect(records.filter((r) => r.product_type_id !== "")).toHaveLength(1);
    expect(materials).toHaveLength(3);
    for (const m of materials) {
      expect(ids.has(m.record_id)).toBe(true);
      expect(materialIds.has(m.material_id)).toBe(true);
      expect(units.has(m.unit)).toBe(true);
    }
    expect(images).toHaveLength(2);
    for (const image of images) {
      expect(ids.has(image.record_id)).toBe(true);
      expect(image.file).toBe(`images/${image.sha256}.jpg`);
      expect(image).toMatchObject({ width: "64", height: "48", format: "jpeg" });
      // The copied file is there, with the bytes the manifest names.
      const bytes = await fileBytes(VERSION, image.file!);
      expect(String(bytes.length)).toBe(image.bytes);
      expect(await sha256Hex(bytes)).toBe(image.sha256);
    }
    for (const c of categories) {
      if (c.supercategory_id) expect(categoryIds.has(c.supercategory_id)).toBe(true);
      expect(taxonomies.has(c.taxonomy_id)).toBe(true);
    }
    expect(units).toEqual(new Set(["kg", "g", "m", "cm"]));
  });

  it("describes itself: datapackage.json, SHA256SUMS and README.md agree with the files", async () => {
    const byPath = new Map(published.files.map((f) => [f.path, f]));
    for (const file of published.files) {
      const bytes = await fileBytes(VERSION, file.path);
      expect(bytes.length).toBe(file.bytes);
      expect(await sha256Hex(bytes)).toBe(file.sha256);
    }
    const datapackage = JSON.parse(await fileText(VERSION, "datapackage.json")) as {
      version: string;
      created: string;
      licenses: { name: string }[];
      resources: { name: string; path: string; bytes: number; hash: string; schema: { primaryKey: string[]; foreignKeys?: unknown[] } }[];
    };
    expect(datapackage).toMatchObject({ version: VERSION, created: published.snapshot_at, licenses: [{ name: "CC-BY-4.0" }] });
    // Every table twice (CSV and Parquet), and CITATION.cff.
    expect(datapackage.resources).toHaveLength(19);
    for (const resource of datapackage.resources) {
      expect(`sha256:${byPath.get(resource.path)!.sha256}`).toBe(resource.hash);
      expect(resource.bytes).toBe(byPath.get(resource.path)!.bytes);
    }
    expect(datapackage.resources.find((r) => r.name === "record_materials")!.schema.foreignKeys).toHaveLength(3);

    const sums = (await fileText(VERSION, "SHA256SUMS")).trimEnd().split("\n");
    const images = await csvTable(VERSION, "images.csv");
    expect(sums).toHaveLength(published.files.length - 1 + new Set(images.map((i) => i.file)).size);
    for (const line of sums) {
      const [hash, path] = line.split("  ");
      if (path!.startsWith("images/")) expect(images.some((i) => i.file === path && i.sha256 === hash)).toBe(true);
      else expect(byPath.get(path!)!.sha256).toBe(hash);
    }
    const readme = await fileText(VERSION, "README.md");
    expect(readme).toContain(published.citation!.replace("relab test release", "*relab test release*"));
    expect(readme).toContain("Built by the tests.");
  });

  it("serves files with a strong ETag, for a year, and answers ranges", async () => {
    const parquet = published.files.find((f) => f.path === "records.parquet")!;
    const url = `/v1/releases/${VERSION}/files/records.parquet`;
    const whole = await api(url);
    expect(whole.status).toBe(200);
    expect(roundTrips(whole)).toBe(1);
    expect(whole.headers.get("etag")).toBe(`"${parquet.sha256}"`);
    expect(whole.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(whole.headers.get("accept-ranges")).toBe("bytes");
    expect(whole.headers.get("content-type")).toBe("application/vnd.apache.parquet");
    expect(whole.headers.get("content-length")).toBe(String(parquet.bytes));
    const bytes = new Uint8Array(await whole.arrayBuffer());

    const first = await api(url, { headers: { range: "bytes=0-3" } });
    expect(first.status).toBe(206);
    expect(first.headers.get("content-range")).toBe(`bytes 0-3/${parquet.bytes}`);
    expect(new TextDecoder().decode(await first.arrayBuffer())).toBe("PAR1");
    const suffix = await api(url, { headers: { range: "bytes=-8" } });
    expect(suffix.status).toBe(206);
    expect(suffix.headers.get("content-range")).toBe(`bytes ${parquet.bytes - 8}-${parquet.bytes - 1}/${parquet.bytes}`);
    expect(new Uint8Array(await suffix.arrayBuffer())).toEqual(bytes.subarray(parquet.bytes - 8));
    const open = await api(url, { headers: { range: `bytes=${parquet.bytes - 2}-` } });
    expect(open.status).toBe(206);
    expect(new Uint8Array(await open.arrayBuffer())).toEqual(bytes.subarray(parquet.bytes - 2));
    const beyond = await api(url, { headers: { range: `bytes=${parquet.bytes}-` } });
    await expectProblem(beyond, 416, "RANGE_NOT_SATISFIABLE");
    expect(beyond.headers.get("content-range")).toBe(`bytes */${parquet.bytes}`);
    const cached = await api(url, { headers: { "if-none-match": `"${parquet.sha256}"` } });
    expect(cached.status).toBe(304);
    expect(roundTrips(cached)).toBe(1);
    const head = await api(url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(parquet.bytes));

    const csv = await api(`/v1/releases/${VERSION}/files/reference/units.csv`);
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8; header=present");
    for (const missing of ["nothing.csv", "reference//units.csv", "reference/.units.csv", "images/nothing.jpg", "records.csv.tail"]) {
      await expectProblem(await api(`/v1/releases/${VERSION}/files/${missing}`), 404, "NOT_FOUND");
    }
    await expectProblem(await api("/v1/releases/9.9/files/records.csv"), 404, "NOT_FOUND");
  });

  it("is read by hyparquet over HTTP ranges, with the CSV's rows and sums", async () => {
    for (const [table, numeric] of [
      ["records", ["id", "weight_g", "amount_in_parent"]],
      ["record_materials", ["record_id", "quantity"]],
      ["reference/units", ["to_base", "position"]],
    ] as const) {
      const requests: { method: string; range: string | null; status: number }[] = [];
      const file = await asyncBufferFromUrl({
        url: `http://localhost/v1/releases/${VERSION}/files/${table}.parquet`,
        fetch: workerFetch(requests),
      });
      const metadata = await parquetMetadataAsync(file);
      const rows = await parquetReadObjects({ file, metadata });
      // Everything came in ranges (after the HEAD that asks for the size), never the whole file.
      expect(requests[0]).toMatchObject({ method: "HEAD", status: 200 });
      expect(requests.slice(1).every((r) => r.status === 206 && r.range !== null)).toBe(true);
      const csv = await csvTable(VERSION, `${table}.csv`);
      expect(rows.length).toBe(csv.length);
      expect(Number(metadata.num_rows)).toBe(csv.length);
      for (const column of numeric) {
        const fromParquet = rows.reduce((sum, row) => sum + Number(row[column] ?? 0), 0);
        const fromCsv = csv.reduce((sum, row) => sum + Number(row[column] || 0), 0);
        expect(fromParquet, `${table}.${column}`).toBeCloseTo(fromCsv, 9);
      }
    }
  });

  it("cannot be changed or deleted through the API, nor built again", async () => {
    for (const method of ["PUT", "PATCH", "DELETE", "POST"]) {
      const response = await api(`/v1/releases/${VERSION}`, { method, headers: admin });
      await expectProblem(response, 405, "METHOD_NOT_ALLOWED");
      expect(response.headers.get("allow")).toBe("GET, HEAD");
      const file = await api(`/v1/releases/${VERSION}/files/records.csv`, { method, headers: admin });
      await expectProblem(file, 405, "METHOD_NOT_ALLOWED");
    }
    await expectProblem(await requestRelease(admin, { version: VERSION, title: "again" }), 409, "ALREADY_EXISTS");
    await expectProblem(await api(`/v1/admin/releases/${VERSION}/retry`, { method: "POST", headers: admin }), 409, "RELEASE_PUBLISHED");
    expect(await (await readRelease(VERSION)).json()).toEqual(published);
  });

  it("lists releases newest first and pages them", async () => {
    const second = await requestRelease(admin, { version: "1.1", title: "second", licence: "CC0-1.0" });
    expect(second.status).toBe(202);
    const building = (await (await api("/v1/releases", { headers: admin })).json()) as { items: ReleaseBody[]; total: number };
    expect(building.items.map((r) => r.version)).toEqual(["1.1", "1.0"]);
    await settledRelease("1.1", admin);
    const page = (await (await api("/v1/releases?size=1&page=2")).json()) as { items: ReleaseBody[]; total: number; pages: number };
    expect(page).toMatchObject({ total: 2, pages: 2 });
    expect(page.items.map((r) => r.version)).toEqual(["1.0"]);
    expect(((await (await api("/v1/releases/latest")).json()) as ReleaseBody).version).toBe("1.1");
    await expectProblem(await api("/v1/releases?size=0"), 422, "VALIDATION_FAILED");
    await expectProblem(await api("/v1/releases?unknown=1"), 422, "VALIDATION_FAILED");
  });
});
