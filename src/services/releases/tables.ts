import { and, eq, gt, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { columnsOf } from "../../db/rows";
import { releaseImages, releaseRecordMaterials, releaseRecords, releaseReferenceRows } from "../../db/schema";
import { checkColumn, QUALITY_CHECK_CODES, QUALITY_CHECK_DESCRIPTIONS } from "../../lib/record-quality";
import { type Column, TableDataError, type TableValues } from "../../lib/release/columns";
import type { ForeignKey } from "../../lib/release/datapackage";
import { circularityOut } from "../products/fields";

/**
 * The tables of a dataset release: their columns (one list for the CSV header, the Parquet
 * schema and datapackage.json), keys, and how the build reads their rows, a page at a time, from
 * the staging tables the snapshot filled (src/services/releases/snapshot.ts).
 */

/** Where a table's reading stopped: the key of the last row written (JSON-safe, kept in the build's checkpoint). */
export type PageCursor = number | readonly [number, number] | readonly [string, number] | null;

/** What rows need from outside the staging tables: the owner pseudonyms. */
export interface RowContext {
  pseudonym(ownerId: number): string;
}

export interface ReleaseTable {
  /** The resource name in datapackage.json (its Parquet twin adds `-parquet`). */
  readonly name: string;
  /** The file path without its extension, relative to the release. */
  readonly path: string;
  readonly title: string;
  readonly description: string;
  readonly columns: readonly Column[];
  readonly primaryKey: readonly string[];
  readonly foreignKeys?: readonly ForeignKey[];
  /** Rows read per D1 round trip. */
  readonly pageRows: number;
  /**
   * The staged rows after `cursor`, at most `limit`, in key order, as values in column order (raw
   * rows: no object per row, which D1 would otherwise build and send key by key), and the cursor
   * after them.
   */
  page(
    db: Db,
    version: string,
    cursor: PageCursor,
    limit: number,
    context: RowContext,
  ): Promise<{ rows: TableValues[]; cursor: PageCursor }>;
}

const id = (description: string): Column => ({ name: "id", type: "int64", nullable: false, description });
const timestamps = (what: string): Column[] => [
  { name: "created_at", type: "datetime", nullable: false, description: `When the ${what} was created (UTC).` },
  { name: "updated_at", type: "datetime", nullable: false, description: `When the ${what} was last changed (UTC).` },
];

export const RECORD_COLUMNS: readonly Column[] = [
  id("The record's id on the platform (a base product's or a component's)."),
  { name: "parent_id", type: "int64", description: "The record this component was taken out of; empty for a base product." },
  { name: "amount_in_parent", type: "int32", description: "How many of this component its parent holds; empty for a base product." },
  {
    name: "owner_pseudonym",
    type: "string",
    nullable: false,
    description:
      "Who contributed the record (a component: its base product's owner), as a keyed hash: the same in every release, meaningless without the service's key.",
  },
  { name: "name", type: "string", nullable: false },
  { name: "description", type: "string" },
  { name: "brand", type: "string", description: "Lower-case." },
  { name: "model", type: "string" },
  { name: "product_type_id", type: "int64", description: "The record's product type (reference/product_types)." },
  { name: "weight_g", type: "double", description: "Grams." },
  { name: "height_cm", type: "double", description: "Centimetres." },
  { name: "width_cm", type: "double", description: "Centimetres." },
  { name: "depth_cm", type: "double", description: "Centimetres." },
  { name: "volume_cm3", type: "double", description: "height_cm * width_cm * depth_cm, when all three are known." },
  {
    name: "circularity_properties",
    type: "object",
    description:
      "Notes on recyclability, disassemblability and remanufacturability: a JSON object with those three members (null when absent).",
  },
  ...timestamps("record"),
];

export const RECORD_MATERIAL_COLUMNS: readonly Column[] = [
  { name: "record_id", type: "int64", nullable: false, description: "The record (records.id)." },
  { name: "material_id", type: "int64", nullable: false, description: "The material (reference/materials.id)." },
  { name: "quantity", type: "double", nullable: false, description: "How much of the material the record holds, in `unit`." },
  { name: "unit", type: "string", nullable: false, description: "The unit of `quantity` (reference/units.code)." },
];

export const IMAGE_COLUMNS: readonly Column[] = [
  { name: "file", type: "string", nullable: false, description: "The image file's path in this release: images/<sha256>.<extension>." },
  { name: "record_id", type: "int64", nullable: false, description: "The record the image shows (records.id)." },
  { name: "sha256", type: "string", nullable: false, description: "SHA-256 of the file, in hex." },
  { name: "width", type: "int32", nullable: false, description: "Pixels, upright." },
  { name: "height", type: "int32", nullable: false, description: "Pixels, upright." },
  { name: "bytes", type: "int64", nullable: false, description: "Size of the file." },
  { name: "format", type: "string", nullable: false, description: "jpeg, png, webp, gif or bmp." },
];

export const QUALITY_COLUMNS: readonly Column[] = [
  { name: "record_id", type: "int64", nullable: false, description: "The record (records.id)." },
  {
    name: "score",
    type: "double",
    nullable: false,
    description: "Passing checks / applicable checks, 3 decimals; 1 when no check applies (the API's quality_score).",
  },
  ...QUALITY_CHECK_CODES.map(
    (code): Column => ({
      name: code,
      type: "string",
      nullable: false,
      description: `pass, fail or not_applicable. ${QUALITY_CHECK_DESCRIPTIONS[code]}`,
    }),
  ),
];

interface ReferenceDefinition {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly columns: readonly Column[];
  readonly primaryKey: readonly string[];
  readonly foreignKeys?: readonly ForeignKey[];
  /** The live table and the JSON object of one row, as the snapshot copies it. */
  readonly source: string;
  readonly row: string;
  readonly order: string;
}

/** The reference tables a release freezes, as the snapshot copies them (one JSON object per row). */
export const REFERENCE_TABLES: readonly ReferenceDefinition[] = [
  {
    name: "taxonomies",
    title: "Taxonomies",
    description: "The classification schemes categories belong to.",
    columns: [
      id("The taxonomy's id."),
      { name: "name", type: "string", nullable: false },
      { name: "version", type: "string", nullable: false, description: "The taxonomy's own version label." },
      { name: "description", type: "string" },
      { name: "domains", type: "array", nullable: false, description: "What it classifies: materials, products, other (a JSON array)." },
      { name: "source", type: "string", description: "Where the taxonomy comes from (a URL or a citation)." },
      ...timestamps("taxonomy"),
    ],
    primaryKey: ["id"],
    source: "taxonomies",
    row: "json_object('id', id, 'name', name, 'version', version, 'description', description, 'domains', json(domains), 'source', source, 'created_at', created_at, 'updated_at', updated_at)",
    order: "id",
  },
  {
    name: "categories",
    title: "Categories",
    description: "Categories of the taxonomies, a tree per taxonomy through supercategory_id.",
    columns: [
      id("The category's id."),
      { name: "taxonomy_id", type: "int64", nullable: false, description: "reference/taxonomies.id" },
      { name: "supercategory_id", type: "int64", description: "The parent category; empty at the top of a tree." },
      { name: "name", type: "string", nullable: false },
      { name: "description", type: "string" },
      { name: "external_id", type: "string", description: "The category's id in the taxonomy it was taken from." },
      ...timestamps("category"),
    ],
    primaryKey: ["id"],
    foreignKeys: [
      { fields: ["taxonomy_id"], reference: { resource: "taxonomies", fields: ["id"] } },
      { fields: ["supercategory_id"], reference: { fields: ["id"] } },
    ],
    source: "categories",
    row: "json_object('id', id, 'taxonomy_id', taxonomy_id, 'supercategory_id', supercategory_id, 'name', name, 'description', description, 'external_id', external_id, 'created_at', created_at, 'updated_at', updated_at)",
    order: "id",
  },
  {
    name: "materials",
    title: "Materials",
    description: "The materials bills of materials name.",
    columns: [
      id("The material's id."),
      { name: "name", type: "string", nullable: false },
      { name: "description", type: "string" },
      { name: "density_kg_m3", type: "double", description: "kg/m³." },
      { name: "is_crm", type: "boolean", nullable: false, description: "On the EU list of critical raw materials." },
      ...timestamps("material"),
    ],
    primaryKey: ["id"],
    source: "materials",
    row: "json_object('id', id, 'name', name, 'description', description, 'density_kg_m3', density_kg_m3, 'is_crm', is_crm, 'created_at', created_at, 'updated_at', updated_at)",
    order: "id",
  },
  {
    name: "product_types",
    title: "Product types",
    description: "The kinds of product records are.",
    columns: [
      id("The product type's id."),
      { name: "name", type: "string", nullable: false },
      { name: "description", type: "string" },
      ...timestamps("product type"),
    ],
    primaryKey: ["id"],
    source: "product_types",
    row: "json_object('id', id, 'name', name, 'description', description, 'created_at', created_at, 'updated_at', updated_at)",
    order: "id",
  },
  {
    name: "units",
    title: "Units",
    description: "Units of bill-of-materials quantities; to_base converts to kilograms (mass) or metres (length).",
    columns: [
      { name: "code", type: "string", nullable: false },
      { name: "name", type: "string", nullable: false },
      { name: "dimension", type: "string", nullable: false, description: "mass or length." },
      { name: "to_base", type: "double", nullable: false },
      { name: "position", type: "int32", nullable: false, description: "Display order." },
    ],
    primaryKey: ["code"],
    source: "units",
    row: "json_object('code', code, 'name', name, 'dimension', dimension, 'to_base', to_base, 'position', position)",
    order: "position, code",
  },
];

const byVersion = (version: string) => sql`release_version = ${version}`;

/** The staged columns of a records row, in RECORD_COLUMNS' order (`owner_id` where the pseudonym goes). */
const RECORD_FIELDS = [
  "id",
  "parent_id",
  "amount_in_parent",
  "owner_id",
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
] as const;

const OWNER = RECORD_COLUMNS.findIndex((c) => c.name === "owner_pseudonym");
const CIRCULARITY = RECORD_COLUMNS.findIndex((c) => c.name === "circularity_properties");

const recordsTable: ReleaseTable = {
  name: "records",
  path: "records",
  title: "Records",
  description:
    "Base products and their components at every depth, one row each: parent_id links a component to the record it was taken out of.",
  columns: RECORD_COLUMNS,
  primaryKey: ["id"],
  foreignKeys: [
    { fields: ["parent_id"], reference: { fields: ["id"] } },
    { fields: ["product_type_id"], reference: { resource: "product_types", fields: ["id"] } },
  ],
  pageRows: 8_000,
  async page(db, version, cursor, limit, context) {
    // In RECORD_COLUMNS' order; the owner's id stands where its pseudonym goes and is replaced in place.
    const rows = await db.values<unknown[]>(
      db
        .select(columnsOf(releaseRecords, RECORD_FIELDS))
        .from(releaseRecords)
        .where(and(eq(releaseRecords.release_version, version), gt(releaseRecords.id, (cursor as number | null) ?? 0)))
        .orderBy(releaseRecords.id)
        .limit(limit),
    );
    for (const row of rows) {
      row[OWNER] = context.pseudonym(row[OWNER] as number);
      if (row[CIRCULARITY] !== null) row[CIRCULARITY] = circularityOut(row[CIRCULARITY] as string);
    }
    const last = rows[rows.length - 1];
    return { rows, cursor: last ? (last[0] as number) : cursor };
  },
};

const recordMaterialsTable: ReleaseTable = {
  name: "record_materials",
  path: "record_materials",
  title: "Bills of materials",
  description: "What each record is made of: one row per record and material.",
  columns: RECORD_MATERIAL_COLUMNS,
  primaryKey: ["record_id", "material_id"],
  foreignKeys: [
    { fields: ["record_id"], reference: { resource: "records", fields: ["id"] } },
    { fields: ["material_id"], reference: { resource: "materials", fields: ["id"] } },
    { fields: ["unit"], reference: { resource: "units", fields: ["code"] } },
  ],
  pageRows: 20_000,
  async page(db, version, cursor, limit) {
    const [record, material] = (cursor as readonly [number, number] | null) ?? [0, 0];
    const rm = releaseRecordMaterials;
    const rows = await db.values<unknown[]>(
      db
        .select(columnsOf(rm, ["record_id", "material_id", "quantity", "unit"]))
        .from(rm)
        // The keyset position as one row-value comparison, which the primary key's index serves.
        .where(and(eq(rm.release_version, version), sql`(${rm.record_id}, ${rm.material_id}) > (${record}, ${material})`))
        .orderBy(rm.record_id, rm.material_id)
        .limit(limit),
    );
    const last = rows[rows.length - 1];
    return { rows, cursor: last ? [last[0] as number, last[1] as number] : cursor };
  },
};

const imagesTable: ReleaseTable = {
  name: "images",
  path: "images",
  title: "Images",
  description:
    "The images of the records: one row per image and record, naming the image file under images/ (identical images share one file).",
  columns: IMAGE_COLUMNS,
  primaryKey: ["file", "record_id"],
  foreignKeys: [{ fields: ["record_id"], reference: { resource: "records", fields: ["id"] } }],
  pageRows: 10_000,
  async page(db, version, cursor, limit) {
    const [file, record] = (cursor as readonly [string, number] | null) ?? ["", 0];
    const ri = releaseImages;
    const rows = await db.values<unknown[]>(
      db
        .select({
          file: ri.file,
          record_id: ri.record_id,
          // The content hash (the key's first 64 characters) and the subtype (`image/` cut off), as the table publishes them.
          sha256: sql<string>`substr(${ri.storage_key}, 1, 64)`.as("sha256"),
          width: ri.width,
          height: ri.height,
          bytes: ri.bytes,
          format: sql<string>`substr(${ri.content_type}, 7)`.as("format"),
        })
        .from(ri)
        .where(and(eq(ri.release_version, version), sql`(${ri.file}, ${ri.record_id}) > (${file}, ${record})`))
        .orderBy(ri.file, ri.record_id)
        .limit(limit),
    );
    const last = rows[rows.length - 1];
    return { rows, cursor: last ? [last[0] as string, last[1] as number] : cursor };
  },
};

/** A staged check (1, 0 or null) as the quality table writes it. */
const STATUS_OF = (column: string) => `CASE ${column} WHEN 1 THEN 'pass' WHEN 0 THEN 'fail' ELSE 'not_applicable' END`;

const qualityTable: ReleaseTable = {
  name: "quality",
  path: "quality",
  title: "Record quality",
  description:
    "The quality checks of every record as they stood at the snapshot (what the API answers at /quality): one row per record, its score and one column per check.",
  columns: QUALITY_COLUMNS,
  primaryKey: ["record_id"],
  foreignKeys: [{ fields: ["record_id"], reference: { resource: "records", fields: ["id"] } }],
  pageRows: 10_000,
  async page(db, version, cursor, limit) {
    // Raw: one CASE column per quality check, composed from the list of checks.
    const rows = await db.values<unknown[]>(sql`
      SELECT id, quality_score, ${sql.raw(QUALITY_CHECK_CODES.map((code) => STATUS_OF(checkColumn(code))).join(", "))}
      FROM release_records WHERE ${byVersion(version)} AND id > ${(cursor as number | null) ?? 0}
      ORDER BY id LIMIT ${limit}`);
    const last = rows[rows.length - 1];
    return { rows, cursor: last ? (last[0] as number) : cursor };
  },
};

function referenceTable(definition: ReferenceDefinition): ReleaseTable {
  return {
    name: definition.name,
    path: `reference/${definition.name}`,
    title: definition.title,
    description: definition.description,
    columns: definition.columns,
    primaryKey: definition.primaryKey,
    ...(definition.foreignKeys ? { foreignKeys: definition.foreignKeys } : {}),
    pageRows: 2_000,
    async page(db, version, cursor, limit) {
      const rr = releaseReferenceRows;
      const rows = await db.all<{ position: number; row: string }>(
        db
          .select(columnsOf(rr, ["position", "row"]))
          .from(rr)
          .where(and(eq(rr.release_version, version), eq(rr.table_name, definition.name), gt(rr.position, (cursor as number | null) ?? 0)))
          .orderBy(rr.position)
          .limit(limit),
      );
      const last = rows[rows.length - 1];
      return {
        rows: rows.map((r) => valuesOf(definition.columns, JSON.parse(r.row) as Record<string, unknown>, r.position)),
        cursor: last ? last.position : cursor,
      };
    },
  };
}

/** A staged JSON row as values in column order; a key the snapshot did not write is a bug, refused like a misspelt alias. */
function valuesOf(columns: readonly Column[], row: Record<string, unknown>, position: number): unknown[] {
  return columns.map(({ name }) => {
    if (!(name in row)) throw new TableDataError(name, position, "missing from the row");
    return row[name];
  });
}

/** Every table of a release, in the order the build writes them. */
export const RELEASE_TABLES: readonly ReleaseTable[] = [
  recordsTable,
  recordMaterialsTable,
  imagesTable,
  ...REFERENCE_TABLES.map(referenceTable),
  // Last: the build's checkpoint counts steps, so the tables before it keep their positions.
  qualityTable,
];

/** The snapshot's copy of each reference table into `release_reference_rows` (statements for the snapshot batch). */
export function referenceCopies(version: string, guard: SQL): SQL[] {
  // Raw: INSERT … SELECT bulk copies, each composed from its table's source, order and JSON row.
  return REFERENCE_TABLES.map(
    (table) => sql`INSERT INTO release_reference_rows (release_version, table_name, position, row)
      SELECT ${version}, ${table.name}, row_number() OVER (ORDER BY ${sql.raw(table.order)}), ${sql.raw(table.row)}
      FROM ${sql.raw(table.source)} WHERE ${guard}`,
  );
}
