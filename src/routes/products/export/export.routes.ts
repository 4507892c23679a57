import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../../lib/problem";
import { authenticateCarried } from "../../../middleware/authenticate";
import { IdParamsSchema } from "../../../schemas/params";
import { EXPORT_FORMATS } from "../../../services/products/export";
import { OrderByParam, PRODUCT_FILTER_PARAMS } from "../products.query";
import { ComponentDetailSchema, ProductDetailSchema } from "../products.schemas";
import { CSV_COLUMNS } from "./export.format";

const FormatParam = z.enum(EXPORT_FORMATS).default("csv").openapi({ description: "`csv` (default) or `json`.", example: "csv" });

/** Query of the list export: the list's filters, search and `order_by`, and `format`; no paging, it returns every match. */
export const ProductExportQuerySchema = z.strictObject({ ...PRODUCT_FILTER_PARAMS, order_by: OrderByParam, format: FormatParam });

export const SingleExportQuerySchema = z.strictObject({ format: FormatParam });

const ExportComponentSchema = ComponentDetailSchema.extend({
  components: z.array(z.record(z.string(), z.unknown())).openapi({
    description: "The components of this component, each of this same shape, nested at every depth.",
  }),
}).openapi("ExportComponent");

const ExportProductSchema = ProductDetailSchema.extend({
  components: z
    .array(ExportComponentSchema)
    .openapi({ description: "Every component, nested at every depth (ordered by id within a parent)." }),
}).openapi("ExportProduct");

const CSV_DESCRIPTION =
  `CSV (\`text/csv\`, UTF-8 with a BOM, RFC 4180, CRLF): a header and one row per record, depth first (a base product, then ` +
  `its components, each followed by its own). Columns: ${CSV_COLUMNS.map((column) => `\`${column}\``).join(", ")}. ` +
  "`owner_username` is empty when the owner's profile is hidden from you; `image_urls` are absolute and separated by single " +
  "spaces; `circularity_properties` is compact JSON; a text cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage " +
  "return is prefixed with `'` so spreadsheets do not run it.";

const STREAMING =
  "The body streams as it is read from the database, so the first bytes come quickly and any size works; read it to the " +
  "end (a cut connection gives a truncated file). Exports are public and rate-limited per IP: 30 a minute anonymous, 90 a " +
  "minute signed in (on top of the user's read bucket). The output depends on the viewer (owner visibility), hence " +
  "`Cache-Control: no-store`. `Content-Disposition` names the file (`relab-products-<UTC stamp>.<ext>`). Signed in, the " +
  "token's check travels in the batch of the first chunk's read, so the body starts after one D1 round trip as an anonymous " +
  "export's does; a token found revoked exports as anonymous, and one that cannot be checked (the database unreachable) is " +
  "a 503 `AUTH_STORE_UNAVAILABLE`, never an anonymous export.";

const exportResponses = (what: string) => ({
  200: {
    description: `${what}. CSV or JSON by \`format\`.`,
    headers: {
      "Content-Disposition": { description: '`attachment; filename="…"`.', schema: { type: "string" as const } },
    },
    content: {
      "text/csv": { schema: z.string().openapi({ description: CSV_DESCRIPTION }) },
      "application/json": { schema: z.array(ExportProductSchema) },
    },
  },
});

export const exportProducts = createRoute({
  method: "get",
  path: "/products/export",
  operationId: "exportProducts",
  tags: ["Products"],
  summary: "Export every matching base product with all components",
  description:
    "Every base product matching the list's filters, search and `order_by` (the same parameters as `GET /v1/products`, " +
    "without paging), each with all its components at every depth. JSON: an array of products in the shape of the " +
    `product read, with \`components\` nested at every level. ${STREAMING} \`owner=me\` needs a signed-in user (401).`,
  middleware: [authenticateCarried] as const,
  request: { query: ProductExportQuerySchema },
  responses: { ...exportResponses("The export"), ...problemResponses(401, 422, 503) },
});

export const exportProduct = createRoute({
  method: "get",
  path: "/products/{id}/export",
  operationId: "exportProduct",
  tags: ["Products"],
  summary: "Export one base product with all components",
  description:
    "One base product with all its components at every depth, as the list export writes it (a component id: 404). " +
    STREAMING.replace("relab-products-<UTC stamp>", "relab-product-<id>-<UTC stamp>"),
  middleware: [authenticateCarried] as const,
  request: { params: IdParamsSchema, query: SingleExportQuerySchema },
  responses: { ...exportResponses("The product"), ...problemResponses(404, 422, 503) },
});
