import { authenticationRequired } from "../../../auth/permissions";
import { batchRows } from "../../../db/client";
import type { AppRouteHandler, BaseEnv } from "../../../env";
import { pageEnvelope } from "../../../lib/pagination";
import {
  type CountRow,
  type FacetRow,
  type FacetValue,
  facetStatement,
  facetsFromRows,
  suggestionStatements,
} from "../../../services/products/query";
import { productFilterFromQuery } from "../products.query";
import type * as routes from "./facets.routes";

export const getProductFacets: AppRouteHandler<typeof routes.getProductFacets, BaseEnv> = async (c) => {
  const { fields, ...query } = c.req.valid("query");
  const filter = productFilterFromQuery(query);
  // Only `owner=me` needs the viewer before the read; otherwise the token check rides in its batch.
  const viewer = filter.ownerMe ? await c.get("viewer").now() : null;
  if (filter.ownerMe && !viewer) throw authenticationRequired();
  // One statement for every field, one round trip.
  const [rows] = await batchRows<[FacetRow]>(c.get("services").db, [facetStatement(filter, fields, viewer?.id ?? null)]);
  c.header("Cache-Control", "no-store");
  return c.json(facetsFromRows(fields, rows), 200);
};

const suggestionsOf =
  (kind: "brands" | "models"): AppRouteHandler<typeof routes.suggestProductBrands, BaseEnv> =>
  async (c) => {
    const { search, page, size } = c.req.valid("query");
    const [rows, total] = await batchRows<[FacetValue, CountRow]>(c.get("services").db, suggestionStatements(kind, search, { page, size }));
    c.header("Cache-Control", "no-store");
    return c.json(
      pageEnvelope(
        rows.map((row) => row.value),
        total[0]?.total ?? 0,
        { page, size },
      ),
      200,
    );
  };

export const suggestProductBrands = suggestionsOf("brands");
export const suggestProductModels = suggestionsOf("models");
