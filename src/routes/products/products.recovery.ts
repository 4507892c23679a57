import type { Context } from "hono";
import type { AppEnv } from "../../env";
import { requestOrigin } from "../../lib/http";
import { type RecordKind, readDetail } from "../../services/products/records";
import { toComponentDetail, toProductDetail } from "./products.mappers";

// What the create routes' idempotency needs of their answers, apart from the handlers so that the
// route declarations (which name it in their middleware) do not import the handlers that import them.

/** Where a created record lives: its `Location`. */
export const locationOf = (kind: RecordKind, id: number) => (kind === "product" ? `/v1/products/${id}` : `/v1/components/${id}`);

/**
 * A create's 201 answer rebuilt from the record it made (`kind`: the created record's), for a
 * retry whose first request died between its create's commit and storing its answer
 * (docs/idempotency.md); null when the record has been deleted since. The same body, headers and
 * status as the create gave, as long as the record has not been changed since.
 */
export const recoverCreated =
  (kind: RecordKind) =>
  async (c: Context<AppEnv>, id: number): Promise<Response | null> => {
    const detail = await readDetail(c.get("services"), id, kind);
    if (!detail) return null;
    const view = { viewer: c.get("user"), origin: requestOrigin(c) };
    const body = kind === "product" ? toProductDetail(detail, view) : toComponentDetail(detail, view);
    return c.json(body, 201, { Location: locationOf(kind, id), "Cache-Control": "no-store" });
  };
