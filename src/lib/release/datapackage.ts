import { type Column, type ColumnType, checkColumns, isoDatetime } from "./columns";
import type { Licence } from "./licences";

/** Data Package v2 (datapackage.org, 2024): `$schema` names the profile, tables have `type`. */
export const DATA_PACKAGE_PROFILE = "https://datapackage.org/profiles/2.0/datapackage.json";

export interface ForeignKey {
  readonly fields: readonly string[];
  /** `resource` is another resource's name; left out, the key points into the same table. */
  readonly reference: { readonly resource?: string; readonly fields: readonly string[] };
}

export interface TableSchemaInput {
  readonly columns: readonly Column[];
  readonly primaryKey?: readonly string[];
  readonly foreignKeys?: readonly ForeignKey[];
}

/** A file of the release; with a schema it is a table (CSV or Parquet). */
export interface ResourceInput {
  readonly name: string;
  readonly path: string;
  readonly format: string;
  readonly mediatype: string;
  readonly bytes: number;
  /** Lower-case hex SHA-256 of the file. */
  readonly sha256: string;
  readonly title?: string;
  readonly description?: string;
  /** Text files only: `utf-8`. */
  readonly encoding?: string;
  readonly schema?: TableSchemaInput;
}

export interface DataPackageInput {
  /** Stable across releases (the version tells them apart), e.g. `relab`. */
  readonly name: string;
  readonly version: string;
  readonly title: string;
  readonly description?: string;
  /** The instant the data was taken (`snapshot_at`): the package's `created`. */
  readonly created: Date;
  /** The release's own URL: its `id` and `homepage`. */
  readonly url?: string;
  readonly licences: readonly Licence[];
  readonly keywords?: readonly string[];
  /** Who made the package: Data Package v2 contributors (a name as `title`, an identifier URL as `path`, roles). */
  readonly contributors?: readonly Contributor[];
  readonly resources: readonly ResourceInput[];
}

export interface Contributor {
  readonly title: string;
  readonly path?: string;
  readonly roles: readonly string[];
}

export interface TableSchemaField {
  name: string;
  type: string;
  description?: string;
  constraints?: { required: true };
}

export interface DataResource {
  name: string;
  type?: "table";
  path: string;
  format: string;
  mediatype: string;
  encoding?: string;
  bytes: number;
  hash: string;
  title?: string;
  description?: string;
  schema?: {
    fields: TableSchemaField[];
    primaryKey?: string[];
    foreignKeys?: { fields: string[]; reference: { resource?: string; fields: string[] } }[];
  };
}

export interface DataPackage {
  $schema: string;
  name: string;
  id?: string;
  title: string;
  description?: string;
  version: string;
  created: string;
  homepage?: string;
  licenses: Licence[];
  keywords?: string[];
  contributors?: { title: string; path?: string; roles: string[] }[];
  resources: DataResource[];
}

const TABLE_SCHEMA_TYPE: Readonly<Record<ColumnType, string>> = {
  int32: "integer",
  int64: "integer",
  double: "number",
  boolean: "boolean",
  string: "string",
  datetime: "datetime",
  object: "object",
  array: "array",
};

const NAME = /^[a-z0-9._-]+$/;
const HEX64 = /^[0-9a-f]{64}$/;

/**
 * datapackage.json for a release. Refuses (throws) what would make an invalid or misleading
 * package: duplicate names or paths, a path leaving the release, a hash that is not SHA-256 hex,
 * a key naming a field the table lacks, and a foreign key that does not resolve to the primary
 * key of a table inside the same package.
 */
export function buildDataPackage(input: DataPackageInput): DataPackage {
  checkName(input.name, "package");
  if (input.version === "" || input.title === "") throw new Error("a package needs a version and a title");
  if (input.licences.length === 0) throw new Error("a package needs a licence");
  if (input.resources.length === 0) throw new Error("a package needs at least one resource");
  const byName = new Map<string, ResourceInput>();
  const paths = new Set<string>();
  for (const resource of input.resources) {
    checkName(resource.name, "resource");
    if (byName.has(resource.name)) throw new Error(`resource name "${resource.name}" appears twice`);
    if (paths.has(resource.path)) throw new Error(`path "${resource.path}" appears twice`);
    checkPath(resource.path);
    byName.set(resource.name, resource);
    paths.add(resource.path);
  }
  return {
    $schema: DATA_PACKAGE_PROFILE,
    name: input.name,
    ...(input.url === undefined ? {} : { id: input.url }),
    title: input.title,
    ...(input.description ? { description: input.description } : {}),
    version: input.version,
    created: isoDatetime(input.created.getTime()),
    ...(input.url === undefined ? {} : { homepage: input.url }),
    licenses: input.licences.map((l) => ({ ...l })),
    ...(input.keywords?.length ? { keywords: [...input.keywords] } : {}),
    ...(input.contributors?.length
      ? { contributors: input.contributors.map((c) => ({ title: c.title, ...(c.path ? { path: c.path } : {}), roles: [...c.roles] })) }
      : {}),
    resources: input.resources.map((resource) => dataResource(resource, byName)),
  };
}

/** The file's text: two-space indented, ending with a newline. */
export function dataPackageJson(input: DataPackageInput): string {
  return `${JSON.stringify(buildDataPackage(input), null, 2)}\n`;
}

function dataResource(resource: ResourceInput, byName: ReadonlyMap<string, ResourceInput>): DataResource {
  const { name, path, format, mediatype, bytes, sha256, title, description, encoding, schema } = resource;
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new Error(`resource "${name}": bytes must be a count`);
  if (!HEX64.test(sha256)) throw new Error(`resource "${name}": sha256 must be 64 lower-case hex digits`);
  return {
    name,
    ...(schema ? { type: "table" as const } : {}),
    path,
    format,
    mediatype,
    ...(encoding ? { encoding } : {}),
    bytes,
    hash: `sha256:${sha256}`,
    ...(title ? { title } : {}),
    ...(description ? { description } : {}),
    ...(schema ? { schema: tableSchema(name, schema, byName) } : {}),
  };
}

function tableSchema(
  table: string,
  schema: TableSchemaInput,
  byName: ReadonlyMap<string, ResourceInput>,
): NonNullable<DataResource["schema"]> {
  checkColumns(schema.columns);
  const own = new Set(schema.columns.map((c) => c.name));
  const where = `resource "${table}"`;
  const primaryKey = schema.primaryKey ? checkKey(schema.primaryKey, own, `${where} primaryKey`) : undefined;
  const foreignKeys = (schema.foreignKeys ?? []).map((key, i) => {
    const fields = checkKey(key.fields, own, `${where} foreignKeys[${i}]`);
    const target = key.reference.resource === undefined ? { name: table, schema } : byName.get(key.reference.resource);
    if (!target?.schema) {
      throw new Error(`${where} foreignKeys[${i}] references "${key.reference.resource}", which is not a table here`);
    }
    const targetFields = new Set(target.schema.columns.map((c) => c.name));
    const referenced = checkKey(key.reference.fields, targetFields, `${where} foreignKeys[${i}] reference`);
    if (referenced.length !== fields.length) throw new Error(`${where} foreignKeys[${i}]: field counts differ`);
    const targetKey = target.schema.primaryKey ?? [];
    if (referenced.length !== targetKey.length || referenced.some((f, j) => f !== targetKey[j])) {
      throw new Error(`${where} foreignKeys[${i}] does not reference the primary key of "${target.name}"`);
    }
    return {
      fields,
      reference: { ...(key.reference.resource === undefined ? {} : { resource: key.reference.resource }), fields: referenced },
    };
  });
  return {
    fields: schema.columns.map(tableSchemaField),
    ...(primaryKey ? { primaryKey } : {}),
    ...(foreignKeys.length ? { foreignKeys } : {}),
  };
}

function tableSchemaField(column: Column): TableSchemaField {
  return {
    name: column.name,
    type: TABLE_SCHEMA_TYPE[column.type],
    ...(column.description ? { description: column.description } : {}),
    ...(column.nullable === false ? { constraints: { required: true as const } } : {}),
  };
}

function checkKey(fields: readonly string[], available: ReadonlySet<string>, where: string): string[] {
  if (fields.length === 0) throw new Error(`${where} names no field`);
  if (new Set(fields).size !== fields.length) throw new Error(`${where} names a field twice`);
  const missing = fields.find((f) => !available.has(f));
  if (missing !== undefined) throw new Error(`${where} names "${missing}", which the table does not have`);
  return [...fields];
}

function checkName(name: string, what: string): void {
  if (!NAME.test(name)) throw new Error(`${what} name "${name}" must be lower-case letters, digits, ".", "_" or "-"`);
}

/** A relative POSIX path that stays inside the release. */
function checkPath(path: string): void {
  const segments = path.split("/");
  if (path.includes("\\") || /[\u0000-\u001f]/.test(path) || segments.some((s) => s === "" || s === "." || s === "..")) {
    throw new Error(`path "${path}" must be a relative path inside the release`);
  }
}

/** IANA media types of a release's files (Parquet's was registered in 2024). */
export const MEDIA_TYPES = {
  csv: "text/csv",
  parquet: "application/vnd.apache.parquet",
  json: "application/json",
  markdown: "text/markdown",
} as const;

export interface FileFacts {
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
}

export interface TableInput {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly schema: TableSchemaInput;
}

/**
 * A table's two resources: `<name>` for the CSV and `<name>-parquet` for the Parquet file, whose
 * foreign keys point at the Parquet files of the tables they reference, so either format alone
 * is a closed set of tables.
 */
export function tableResources(table: TableInput, csv: FileFacts, parquet: FileFacts): [ResourceInput, ResourceInput] {
  const common = {
    ...(table.title ? { title: table.title } : {}),
    ...(table.description ? { description: table.description } : {}),
  };
  const parquetSchema: TableSchemaInput = {
    ...table.schema,
    ...(table.schema.foreignKeys
      ? {
          foreignKeys: table.schema.foreignKeys.map((key) =>
            key.reference.resource === undefined
              ? key
              : { ...key, reference: { ...key.reference, resource: `${key.reference.resource}-parquet` } },
          ),
        }
      : {}),
  };
  return [
    { name: table.name, ...csv, format: "csv", mediatype: MEDIA_TYPES.csv, encoding: "utf-8", ...common, schema: table.schema },
    { name: `${table.name}-parquet`, ...parquet, format: "parquet", mediatype: MEDIA_TYPES.parquet, ...common, schema: parquetSchema },
  ];
}
