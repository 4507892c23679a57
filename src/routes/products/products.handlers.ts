import type { RouteConfig } from "@hono/zod-openapi";
import { assertMayModify, authenticationRequired } from "../../auth/permissions";
import { batchRows } from "../../db/client";
import type { AppRouteHandler, BaseEnv } from "../../env";
import { jsonWithEtag } from "../../lib/etag";
import { requestOrigin } from "../../lib/http";
import { pageEnvelope } from "../../lib/pagination";
import { notFound } from "../../lib/problem";
import { requireVerified } from "../../middleware/guards";
import { type CreatedRecords, createRecords } from "../../services/products/create";
import { auditModeration } from "../../services/products/moderation";
import { type CountRow, type ProductListRow, productListStatements } from "../../services/products/query";
import {
  deleteRecord,
  type RecordDetail,
  type RecordKind,
  readDeletionTarget,
  readDetail,
  readOwnership,
} from "../../services/products/records";
import { updateRecord, versionFromIfMatch } from "../../services/products/update";
import { toComponentDetail, toProductDetail, toProductSummary } from "./products.mappers";
import { parseProductListQuery } from "./products.query";
import { locationOf } from "./products.recovery";
import type * as routes from "./products.routes";

type Handler<R extends RouteConfig> = AppRouteHandler<R, BaseEnv>;

const missing = (kind: RecordKind) => () => notFound(kind === "product" ? "No base product has this id." : "No component has this id.");

/** The detail of the top record of a create, from what the create knows. */
function createdDetail(created: CreatedRecords): RecordDetail {
  const row = created.rows[0]!;
  return {
    row,
    bom: (created.bom.get(row.id) ?? []).map((entry) => ({ product_id: row.id, ...entry, unit: entry.unit as "kg" })),
    components: created.rows.filter((candidate) => candidate.parent_id === row.id),
    videos: created.videos,
    // A record has no media yet when it is created.
    images: [],
    files: [],
  };
}

export const createProduct: Handler<typeof routes.createProduct> = async (c) => {
  const user = requireVerified(c);
  const created = await createRecords(c.get("services"), user, c.req.valid("json"), null, missing("product"), c.get("idempotencyKey"));
  const detail = createdDetail(created);
  c.header("Location", locationOf("product", detail.row.id));
  c.header("Cache-Control", "no-store");
  return c.json(toProductDetail(detail, { viewer: user, origin: requestOrigin(c) }), 201);
};

const createComponentUnder =
  (kind: RecordKind): Handler<typeof routes.createProductComponent> =>
  async (c) => {
    const user = requireVerified(c);
    const parent = { id: c.req.valid("param").id, kind };
    const created = await createRecords(c.get("services"), user, c.req.valid("json"), parent, missing(kind), c.get("idempotencyKey"));
    const detail = createdDetail(created);
    c.header("Location", locationOf("component", detail.row.id));
    c.header("Cache-Control", "no-store");
    return c.json(toComponentDetail(detail, { viewer: user, origin: requestOrigin(c) }), 201);
  };

export const createProductComponent = createComponentUnder("product");
export const createSubcomponent = createComponentUnder("component");

export const getProduct: Handler<typeof routes.getProduct> = async (c) => {
  const [detail, viewer] = await c.get("viewer").after(readDetail(c.get("services"), c.req.valid("param").id, "product"));
  if (!detail) throw missing("product")();
  return jsonWithEtag(c, toProductDetail(detail, { viewer, origin: requestOrigin(c) }));
};

export const getComponent: Handler<typeof routes.getComponent> = async (c) => {
  const [detail, viewer] = await c.get("viewer").after(readDetail(c.get("services"), c.req.valid("param").id, "component"));
  if (!detail) throw missing("component")();
  return jsonWithEtag(c, toComponentDetail(detail, { viewer, origin: requestOrigin(c) }));
};

const deleteOf =
  (kind: RecordKind): Handler<typeof routes.deleteProduct> =>
  async (c) => {
    const user = requireVerified(c);
    const { id } = c.req.valid("param");
    const svc = c.get("services");
    const owned = await readDeletionTarget(svc, id, kind, svc.config.deletionSliceRecords);
    assertMayModify(user, owned, missing(kind));
    await deleteRecord(svc, id, kind, owned);
    auditModeration(svc.log, user, owned, "moderation.record.deleted", { kind, id });
    return c.body(null, 204);
  };

export const deleteProduct = deleteOf("product");
export const deleteComponent = deleteOf("component");

export const listProducts: Handler<typeof routes.listProducts> = async (c) => {
  const { filter, page } = parseProductListQuery(c.req.valid("query"));
  const known = c.get("viewer");
  // Only `owner=me` needs the viewer before the read; otherwise the token check rides in its batch.
  const owner = filter.ownerMe ? await known.now() : null;
  if (filter.ownerMe && !owner) throw authenticationRequired();
  const [[rows, total], viewer] = await known.after(
    batchRows<[ProductListRow, CountRow]>(c.get("services").db, productListStatements(filter, owner?.id ?? null, page)),
  );
  c.header("Cache-Control", "no-store");
  return c.json(
    pageEnvelope(
      rows.map((row) => toProductSummary(row, viewer)),
      total[0]?.total ?? 0,
      page,
    ),
    200,
  );
};

const updateOf =
  (kind: RecordKind): Handler<typeof routes.updateComponent> =>
  async (c) => {
    const user = requireVerified(c);
    const expected = versionFromIfMatch(c.req.valid("header")["if-match"]);
    const current = await readDetail(c.get("services"), c.req.valid("param").id, kind);
    const owned = current ? { ownerId: current.row.owner_id } : null;
    assertMayModify(user, owned, missing(kind));
    const updated = await updateRecord(c.get("services"), current!, c.req.valid("json"), expected);
    auditModeration(c.get("log"), user, owned, "moderation.record.updated", { kind, id: current!.row.id });
    const view = { viewer: user, origin: requestOrigin(c) };
    c.header("Cache-Control", "no-store");
    return c.json(kind === "product" ? toProductDetail(updated, view) : toComponentDetail(updated, view), 200);
  };

export const updateProduct = updateOf("product");
export const updateComponent = updateOf("component");
