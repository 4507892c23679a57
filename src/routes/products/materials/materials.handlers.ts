import type { Context } from "hono";
import type { AppEnv, AppRouteHandler } from "../../../env";
import { jsonWithEtag } from "../../../lib/etag";
import { notFound } from "../../../lib/problem";
import { requireVerified } from "../../../middleware/guards";
import {
  addBomEntries,
  type BomRecord,
  readBom,
  readBomEntry,
  removeBomEntries,
  removeBomEntry,
  updateBomEntry,
} from "../../../services/products/bill-of-materials";
import { auditModeration } from "../../../services/products/moderation";
import type { BomRow, RecordKind } from "../../../services/products/records";
import type { BomRoutes } from "./materials.routes";

const PREFIX = { product: "/v1/products", component: "/v1/components" } as const;

/** The record a request addresses, with the 404 a missing (or someone else's) record answers; a moderator's change is audited. */
const recordOf = (kind: RecordKind, id: number, c?: Context<AppEnv>): BomRecord => ({
  id,
  kind,
  missing: () => notFound(kind === "product" ? "No base product has this id." : "No component has this id."),
  onModeration: c ? (owner) => auditModeration(c.get("log"), c.get("user")!, owner, "moderation.bom.changed", { kind, id }) : undefined,
});

/** An entry as the API shows it (the stored row carries the record id too). */
const toEntry = (row: BomRow) => ({
  material_id: row.material_id,
  material_name: row.material_name,
  quantity: row.quantity,
  unit: row.unit,
});

type Handler<K extends keyof BomRoutes> = AppRouteHandler<BomRoutes[K]>;

/** The handlers of the seven bill-of-materials routes of one kind of record. */
export function bomHandlers(kind: RecordKind) {
  const list: Handler<"list"> = async (c) => {
    const entries = await readBom(c.get("services"), recordOf(kind, c.req.valid("param").id));
    return jsonWithEtag(c, entries.map(toEntry));
  };

  const get: Handler<"get"> = async (c) => {
    const { id, material_id } = c.req.valid("param");
    return jsonWithEtag(c, toEntry(await readBomEntry(c.get("services"), recordOf(kind, id), material_id)));
  };

  const add: Handler<"add"> = async (c) => {
    const user = requireVerified(c);
    const { id } = c.req.valid("param");
    const entries = await addBomEntries(c.get("services"), user, recordOf(kind, id), c.req.valid("json"), (i) => `/${i}/material_id`);
    c.header("Location", `${PREFIX[kind]}/${id}/materials`);
    return c.json(entries.map(toEntry), 201);
  };

  const addOne: Handler<"addOne"> = async (c) => {
    const user = requireVerified(c);
    const { id, material_id } = c.req.valid("param");
    const entries = await addBomEntries(
      c.get("services"),
      user,
      recordOf(kind, id),
      [{ material_id, ...c.req.valid("json") }],
      () => "#/path/material_id",
    );
    c.header("Location", `${PREFIX[kind]}/${id}/materials/${material_id}`);
    return c.json(toEntry(entries.find((entry) => entry.material_id === material_id)!), 201);
  };

  const update: Handler<"update"> = async (c) => {
    const user = requireVerified(c);
    const { id, material_id } = c.req.valid("param");
    return c.json(toEntry(await updateBomEntry(c.get("services"), user, recordOf(kind, id, c), material_id, c.req.valid("json"))), 200);
  };

  const removeOne: Handler<"removeOne"> = async (c) => {
    const user = requireVerified(c);
    const { id, material_id } = c.req.valid("param");
    await removeBomEntry(c.get("services"), user, recordOf(kind, id, c), material_id);
    return c.body(null, 204);
  };

  const removeMany: Handler<"removeMany"> = async (c) => {
    const user = requireVerified(c);
    await removeBomEntries(c.get("services"), user, recordOf(kind, c.req.valid("param").id, c), c.req.valid("json"));
    return c.body(null, 204);
  };

  return { list, get, add, addOne, update, removeOne, removeMany };
}
