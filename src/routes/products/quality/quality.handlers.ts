import type { AppRouteHandler } from "../../../env";
import { jsonWithEtag } from "../../../lib/etag";
import { notFound } from "../../../lib/problem";
import { readRecordQuality } from "../../../services/products/quality";
import type { RecordKind } from "../../../services/products/records";
import type * as routes from "./quality.routes";

const qualityOf =
  (kind: RecordKind): AppRouteHandler<typeof routes.getProductQuality> =>
  async (c) => {
    const quality = await readRecordQuality(c.get("services"), c.req.valid("param").id, kind);
    if (!quality) throw notFound(kind === "product" ? "No base product has this id." : "No component has this id.");
    return jsonWithEtag(c, quality);
  };

export const getProductQuality = qualityOf("product");
export const getComponentQuality = qualityOf("component");
