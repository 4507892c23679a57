import type { Context } from "hono";
import { authenticationRequired } from "../../../auth/permissions";
import type { AppEnv, AppRouteHandler } from "../../../env";
import { requestOrigin } from "../../../lib/http";
import { notFound } from "../../../lib/problem";
import { textStream } from "../../../lib/text-stream";
import { pendingViewerId } from "../../../middleware/authenticate";
import { type ExportFormat, type ExportScope, type ExportTree, exportChunks } from "../../../services/products/export";
import { productFilterFromQuery } from "../products.query";
import { exportDocument } from "./export.format";
import type * as routes from "./export.routes";

const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: "text/csv; charset=utf-8; header=present",
  json: "application/json; charset=utf-8",
};

/** `20261121T093015Z`: the UTC time of the export, safe in a file name. */
function fileStamp(now: Date): string {
  return now
    .toISOString()
    .replace(/\.\d{3}Z$/, "Z")
    .replace(/[-:]/g, "");
}

/**
 * Reads the first chunk before answering (so a missing product is a 404, and a database error a
 * Problem Details 500, or 503 when a token was presented, not a cut stream), then streams the document. A presented token's check
 * travels in the first chunk's batch (`authenticateCarried`), so the viewer is known once that
 * chunk is read, before anything of the response is decided. Rows and round trips are logged
 * when the stream ends, however it ends.
 */
async function streamExport(c: Context<AppEnv>, scope: ExportScope, format: ExportFormat, fileName: string): Promise<Response> {
  const started = Date.now();
  const chunks = exportChunks(c.get("services"), scope, format);
  const first = await chunks.next();
  // `owner=me` was read as the account the token names; a token the check found revoked (the
  // request is then anonymous) gets the 401 an anonymous `owner=me` gets, and none of those rows.
  if ("filter" in scope && scope.filter.ownerMe && c.get("user")?.id !== scope.viewerId) throw authenticationRequired();
  if ("productId" in scope && (first.done || first.value.length === 0)) throw notFound("No base product has this id.");

  let records = 0;
  let chunkCount = 0;
  async function* counted(): AsyncGenerator<ExportTree[], void, undefined> {
    if (!first.done) {
      chunkCount += 1;
      records += first.value.reduce((sum, tree) => sum + tree.length, 0);
      yield first.value;
    }
    for await (const trees of chunks) {
      chunkCount += 1;
      records += trees.reduce((sum, tree) => sum + tree.length, 0);
      yield trees;
    }
  }

  const log = c.get("log");
  const roundTrips = c.get("services").roundTrips;
  const document = exportDocument(counted(), format, { viewer: c.get("user"), origin: requestOrigin(c) });
  const body = textStream(
    document,
    (outcome, error) => {
      const fields = { format, outcome, records, chunks: chunkCount, d1_round_trips: roundTrips.count, duration_ms: Date.now() - started };
      if (outcome === "failed") log.error("export ended", { ...fields, error });
      else log.info("export ended", fields);
    },
    c.req.raw.signal,
  );
  return new Response(body, {
    status: 200,
    headers: {
      "Content-Type": CONTENT_TYPES[format],
      "Content-Disposition": `attachment; filename="${fileName}.${format}"`,
      // Who owns what is shown per viewer, and the data changes: never cached.
      "Cache-Control": "no-store",
    },
  });
}

export const exportProducts: AppRouteHandler<typeof routes.exportProducts> = async (c) => {
  const { format, ...query } = c.req.valid("query");
  const filter = productFilterFromQuery(query);
  // Only `owner=me` reads differently per viewer: provisionally as the account the token names,
  // whose check travels in the same batch (`streamExport` answers 401 if the token no longer counts).
  const viewerId = pendingViewerId(c) ?? c.get("user")?.id ?? null;
  if (filter.ownerMe && viewerId === null) throw authenticationRequired();
  const scope = { filter, viewerId };
  return await streamExport(c, scope, format, `relab-products-${fileStamp(new Date())}`);
};

export const exportProduct: AppRouteHandler<typeof routes.exportProduct> = async (c) => {
  const { id } = c.req.valid("param");
  const { format } = c.req.valid("query");
  return await streamExport(c, { productId: id }, format, `relab-product-${id}-${fileStamp(new Date())}`);
};
