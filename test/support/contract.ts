import { dereference, type OutputUnit, type Schema, validate } from "@cfworker/json-schema";
import { app, type appFor } from "../../src/app";
import { openApiDocument } from "../../src/lib/openapi";

// The contract is the app's own OpenAPI document (what GET /v1/openapi.json serves). Every JSON
// body the tests receive is checked against the schema it documents for the operation (method +
// path template) and the status, so the document cannot drift from the code unnoticed.
//
// @cfworker/json-schema interprets schemas instead of compiling them to JavaScript, so this runs
// alike in workerd and in Node (and in a property-based test over the same document).

interface MediaType {
  schema?: Schema;
}
interface ResponseObject {
  content?: Record<string, MediaType>;
}
interface Operation {
  operationId?: string;
  responses: Record<string, ResponseObject>;
}
type Document = { paths: Record<string, Record<string, Operation>> } & Record<string, unknown>;

/** A documented operation and the path template it was found under. */
export interface DocumentedOperation {
  method: string;
  template: string;
  operation: Operation;
}

const METHODS = ["get", "put", "post", "delete", "patch"];
// The base the document's "#/components/..." references resolve against; any absolute URI does.
const DOCUMENT_ID = "https://contract.relab.test/openapi.json";

interface Contract {
  document: Document;
  lookup: Record<string, Schema | boolean>;
  templates: Template[];
}

/** The app whose document a response is checked against (a configuration may leave plugins out). */
type App = ReturnType<typeof appFor>;

const contracts = new Map<App, Contract>();

interface Template {
  template: string;
  pattern: RegExp;
  /** Segments without a parameter: "/v1/products/export" wins over "/v1/products/{id}". */
  literals: number;
}

// Names under which a schema maps names to subschemas: the names there are not keywords.
const MAPS = new Set(["properties", "patternProperties", "$defs", "schemas", "dependentSchemas"]);

/**
 * The document without `example`/`examples`: they are annotations, and the validator would
 * otherwise index them as schemas (an example's `id` reads as a schema id).
 */
function withoutExamples<T>(node: T, isMap = false): T {
  if (Array.isArray(node)) return node.map((item) => withoutExamples(item)) as T;
  if (node === null || typeof node !== "object") return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (!isMap && (key === "example" || key === "examples")) continue;
    copy[key] = withoutExamples(value, !isMap && MAPS.has(key));
  }
  return copy as T;
}

function load(of: App = app): Contract {
  let contract = contracts.get(of);
  if (!contract) {
    // A copy: the validator annotates the schema objects it indexes.
    const document = withoutExamples(structuredClone(openApiDocument(of, "http://localhost"))) as unknown as Document;
    const lookup = dereference({ ...document, $id: DOCUMENT_ID } as unknown as Schema);
    const templates = Object.keys(document.paths)
      .map((template) => {
        const segments = template.split("/");
        const source = segments.map((segment) => (/^\{[^}]+\}$/.test(segment) ? "[^/]+" : segment.replace(/[.*+?^$()|[\]\\]/g, "\\$&")));
        return {
          template,
          pattern: new RegExp(`^${source.join("/")}$`),
          literals: segments.filter((segment) => !segment.startsWith("{")).length,
        };
      })
      .sort((a, b) => b.literals - a.literals);
    contract = { document, lookup, templates };
    contracts.set(of, contract);
  }
  return contract;
}

/** The app's OpenAPI document, as the contract checks use it. */
export function contractDocument(): Document {
  return load().document;
}

/** The documented operation a request reaches, if any (development routes and probes are not documented). */
export function documentedOperation(method: string, pathname: string, of: App = app): DocumentedOperation | undefined {
  const lower = method.toLowerCase();
  if (!METHODS.includes(lower)) return undefined;
  const { document, templates } = load(of);
  for (const { template, pattern } of templates) {
    if (!pattern.test(pathname)) continue;
    const operation = document.paths[template]?.[lower];
    if (operation) return { method: lower, template, operation };
  }
  return undefined;
}

function mediaType(contentType: string | null): string | null {
  return contentType ? contentType.split(";")[0]!.trim().toLowerCase() : null;
}

function isJson(type: string | null): boolean {
  return type !== null && (type === "application/json" || type.endsWith("+json"));
}

function documentedMedia(content: Record<string, MediaType>, type: string): MediaType | undefined {
  if (content[type]) return content[type];
  const [family] = type.split("/");
  return content[`${family}/*`] ?? content["*/*"];
}

function explain(units: OutputUnit[]): string {
  return units
    .slice(0, 8)
    .map((unit) => `${unit.instanceLocation || "#"}: ${unit.error} (${unit.keywordLocation.replace(/^#\/paths\/[^/]+\/[^/]+\//, "")})`)
    .join("\n  ");
}

/**
 * What is wrong with a response by the contract, or an empty list: its status must be documented
 * for the operation, its media type among that status's, and a JSON body valid against that
 * media type's schema. Requests no documented operation answers are not checked.
 */
export function contractViolations(
  method: string,
  pathname: string,
  status: number,
  contentType: string | null,
  body: unknown,
  of: App = app,
): string[] {
  const found = documentedOperation(method, pathname, of);
  if (!found) return [];
  const where = `${found.method.toUpperCase()} ${found.template} -> ${status}`;
  const documented = found.operation.responses[String(status)] ?? found.operation.responses.default;
  if (!documented) return [`${where}: status not documented (documented: ${Object.keys(found.operation.responses).join(", ")})`];
  const type = mediaType(contentType);
  const content = documented.content ?? {};
  if (type === null || body === undefined) {
    return Object.keys(content).length === 0 || status === 304 || method.toUpperCase() === "HEAD"
      ? []
      : [`${where}: no body, documented as ${Object.keys(content).join(", ")}`];
  }
  const media = documentedMedia(content, type);
  if (!media) return [`${where}: ${type} not documented (documented: ${Object.keys(content).join(", ") || "no body"})`];
  if (!isJson(type) || !media.schema) return [];
  const result = validate(body, media.schema, "2020-12", load(of).lookup, false);
  return result.valid ? [] : [`${where}: body does not match the documented schema\n  ${explain(result.errors)}`];
}

/** What is wrong with `instance` by `schema`, a schema of the app's document (its `$ref`s resolve), or an empty list. */
export function schemaViolations(instance: unknown, schema: Schema): string[] {
  const result = validate(instance, schema, "2020-12", load().lookup, false);
  return result.valid ? [] : [explain(result.errors)];
}

/**
 * Checks `response` (to a request of `method` for `url`) against the contract, reading a clone of
 * its body when it is JSON, and throws with every violation found.
 */
export async function assertMatchesContract(method: string, url: URL, response: Response, of: App = app): Promise<void> {
  const type = mediaType(response.headers.get("content-type"));
  let body: unknown;
  // A download (the exports, streamed) is left to the test that reads it: reading a copy to its
  // end would keep the stream going after the client stops reading.
  if (response.headers.get("content-disposition")?.startsWith("attachment")) return;
  if (isJson(type) && method.toUpperCase() !== "HEAD" && response.body !== null) {
    const text = await response.clone().text();
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`${method} ${url.pathname} -> ${response.status}: ${type} body is not JSON: ${text.slice(0, 200)}`);
    }
  } else if (response.body !== null && type !== null) {
    body = null;
  }
  const violations = contractViolations(method, url.pathname, response.status, response.headers.get("content-type"), body, of);
  if (violations.length > 0) throw new Error(`response breaks the OpenAPI contract:\n${violations.join("\n")}`);
}
