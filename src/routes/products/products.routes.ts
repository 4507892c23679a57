import { createRoute, z } from "@hono/zod-openapi";
import { SIGNED_IN } from "../../lib/openapi";
import { pagedSchema } from "../../lib/pagination";
import { problemResponses } from "../../lib/problem";
import { authenticate } from "../../middleware/authenticate";
import { IdempotencyKeyHeaderSchema, idempotent } from "../../middleware/idempotency";
import { cachedRead } from "../../middleware/read-copies";
import { IdParamsSchema, NoQuerySchema } from "../../schemas/params";
import { ProductListQuerySchema } from "./products.query";
import { recoverCreated } from "./products.recovery";
import {
  ComponentCreateSchema,
  ComponentDetailSchema,
  ComponentUpdateSchema,
  ProductCreateSchema,
  ProductDetailSchema,
  ProductSummarySchema,
  ProductUpdateSchema,
} from "./products.schemas";

const json = <T extends z.ZodType>(schema: T) => ({ required: true, content: { "application/json": { schema } } });
const IDEMPOTENT_CREATE =
  "Send an `Idempotency-Key` to make retries safe (docs/idempotency.md): a retry gets the first answer again; 409 " +
  "`IDEMPOTENCY_REQUEST_IN_PROGRESS` while the first request runs, 422 `IDEMPOTENCY_KEY_REUSED` for another body on the " +
  "same path, 410 `IDEMPOTENCY_RECORD_GONE` when the record the first request made has been deleted since, 503 " +
  "`IDEMPOTENCY_STORE_UNAVAILABLE` when the key store cannot be reached.";
const VIEWER_DEPENDENT =
  "Public. Who owns the record is shown only as far as the owner's profile visibility allows the viewer " +
  "(hence `Cache-Control: no-store`). Sends an `ETag` over the whole response and answers `If-None-Match` with 304.";

export const createProduct = createRoute({
  method: "post",
  path: "/products",
  operationId: "createProduct",
  tags: ["Products"],
  summary: "Create a base product",
  description:
    "Creates a base product with, optionally, nested `components` (at most 100 per level, 10 levels, 1,000 in all), a " +
    "`bill_of_materials` per record and up to 5 `videos`, atomically. Needs a verified account. Unknown product type or " +
    "material ids: 422 pointing at them; nesting deeper than 10 levels: 400 `COMPONENT_TOO_DEEP`. " +
    IDEMPOTENT_CREATE,
  security: SIGNED_IN,
  middleware: [authenticate("required"), idempotent({ recover: recoverCreated("product") })] as const,
  request: { headers: IdempotencyKeyHeaderSchema, body: json(ProductCreateSchema) },
  responses: {
    201: { description: "Created; `Location` names it.", content: { "application/json": { schema: ProductDetailSchema } } },
    ...problemResponses(400, 401, 403, 409, 410, 413, 415, 422, 503),
  },
});

export const getProduct = createRoute({
  method: "get",
  path: "/products/{id}",
  operationId: "getProduct",
  tags: ["Products"],
  summary: "Read a base product",
  description: `A base product with its type, bill of materials, direct components and videos (a component id: 404). ${VIEWER_DEPENDENT}`,
  middleware: [cachedRead("record")] as const,
  request: { params: IdParamsSchema, query: NoQuerySchema },
  responses: {
    200: { description: "The product.", content: { "application/json": { schema: ProductDetailSchema } } },
    304: { description: "Unchanged since the `If-None-Match` ETag." },
    ...problemResponses(404, 422, 503),
  },
});

export const deleteProduct = createRoute({
  method: "delete",
  path: "/products/{id}",
  operationId: "deleteProduct",
  tags: ["Products"],
  summary: "Delete a base product",
  description: "Deletes your base product with all its components, bills of materials and videos. Someone else's product: 404.",
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { params: IdParamsSchema },
  responses: { 204: { description: "Deleted." }, ...problemResponses(401, 403, 404, 422) },
});

export const getComponent = createRoute({
  method: "get",
  path: "/components/{id}",
  operationId: "getComponent",
  tags: ["Products"],
  summary: "Read a component",
  description: `A component with its type, bill of materials and direct components (a base product id: 404). ${VIEWER_DEPENDENT}`,
  middleware: [cachedRead("record")] as const,
  request: { params: IdParamsSchema, query: NoQuerySchema },
  responses: {
    200: { description: "The component.", content: { "application/json": { schema: ComponentDetailSchema } } },
    304: { description: "Unchanged since the `If-None-Match` ETag." },
    ...problemResponses(404, 422, 503),
  },
});

export const deleteComponent = createRoute({
  method: "delete",
  path: "/components/{id}",
  operationId: "deleteComponent",
  tags: ["Products"],
  summary: "Delete a component",
  description: "Deletes your component with everything nested in it. Someone else's component: 404.",
  security: SIGNED_IN,
  middleware: [authenticate("required")] as const,
  request: { params: IdParamsSchema },
  responses: { 204: { description: "Deleted." }, ...problemResponses(401, 403, 404, 422) },
});

const componentCreate = (path: "/products/{id}/components" | "/components/{id}/components", parent: string) =>
  createRoute({
    method: "post",
    path,
    operationId: path.startsWith("/products") ? "createProductComponent" : "createSubcomponent",
    tags: ["Products"],
    summary: `Create a component under a ${parent}`,
    description:
      `Creates a component (with nested components and bills of materials) under your ${parent}; someone else's: 404. ` +
      "Components nest at most 10 levels below the base product (deeper: 400 `COMPONENT_TOO_DEEP`). Needs a verified account. " +
      IDEMPOTENT_CREATE,
    security: SIGNED_IN,
    middleware: [authenticate("required"), idempotent({ recover: recoverCreated("component") })] as const,
    request: { params: IdParamsSchema, headers: IdempotencyKeyHeaderSchema, body: json(ComponentCreateSchema) },
    responses: {
      201: { description: "Created; `Location` names it.", content: { "application/json": { schema: ComponentDetailSchema } } },
      ...problemResponses(400, 401, 403, 404, 409, 410, 413, 415, 422, 503),
    },
  });

export const createProductComponent = componentCreate("/products/{id}/components", "base product");
export const createSubcomponent = componentCreate("/components/{id}/components", "component");

export const listProducts = createRoute({
  method: "get",
  path: "/products",
  operationId: "listProducts",
  tags: ["Products"],
  summary: "List base products",
  description:
    "One page of base products (components are reached through their products), filtered, searched and ordered as the " +
    "parameters say (docs/product-list.md); `owner=me` needs a signed-in user (401 otherwise). The owner is shown as far as " +
    "each owner's profile visibility allows the viewer, hence `Cache-Control: no-store`. `total` is exact up to 10,000 " +
    'matches; past that it is 10000 with `total_relation: "gte"` (decisions.md, Page totals), so a page costs the same ' +
    "however large the catalogue (docs/product-list.md, Plans).",
  middleware: [cachedRead("catalogue")] as const,
  request: { query: ProductListQuerySchema },
  responses: {
    200: {
      description: "A page of products.",
      content: { "application/json": { schema: pagedSchema(ProductSummarySchema, "ProductPage") } },
    },
    ...problemResponses(401, 422, 503),
  },
});

// Optional to the validator so that a missing header is the handler's 428, not a 422; required
// in the document, because a request without it never succeeds.
const IfMatchHeaderSchema = z.object({
  "if-match": z
    .string()
    .optional()
    .openapi({
      param: { required: true },
      description: 'The record\'s `version`, quoted: `"3"`. Required (428 without it); stale or malformed: 412.',
      example: '"3"',
    }),
});

const recordPatch = (path: "/products/{id}" | "/components/{id}", kind: "base product" | "component") =>
  createRoute({
    method: "patch",
    path,
    operationId: path.startsWith("/products") ? "updateProduct" : "updateComponent",
    tags: ["Products"],
    summary: `Update a ${kind}`,
    description:
      `Changes the ${kind}'s own fields. Send its \`version\` in \`If-Match\` ("3"): missing 428; stale, \`*\`, weak or ` +
      "several values 412 (the GET ETag is not a version). A change bumps `version` by one; a PATCH that changes nothing " +
      "succeeds whatever version it names. Bill-of-materials, component and media edits leave `version` alone. Someone " +
      "else's record: 404.",
    security: SIGNED_IN,
    middleware: [authenticate("required")] as const,
    request: {
      params: IdParamsSchema,
      headers: IfMatchHeaderSchema,
      body: json(kind === "component" ? ComponentUpdateSchema : ProductUpdateSchema),
    },
    responses: {
      200: {
        description: "The updated record.",
        content: { "application/json": { schema: kind === "component" ? ComponentDetailSchema : ProductDetailSchema } },
      },
      ...problemResponses(401, 403, 404, 412, 413, 415, 422, 428),
    },
  });

export const updateProduct = recordPatch("/products/{id}", "base product");
export const updateComponent = recordPatch("/components/{id}", "component");
