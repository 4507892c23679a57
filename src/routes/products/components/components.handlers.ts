import type { AppRouteHandler } from "../../../env";
import { jsonTextWithEtag, jsonWithEtag } from "../../../lib/etag";
import { pageEnvelope } from "../../../lib/pagination";
import { notFound } from "../../../lib/problem";
import { readComponentPage, readComponentTreeSummaries } from "../../../services/products/component-tree";
import type { RecordKind } from "../../../services/products/records";
import { componentTreeJson, toComponentSummary } from "../products.mappers";
import type * as routes from "./components.routes";

const missing = (kind: RecordKind) => notFound(kind === "product" ? "No base product has this id." : "No component has this id.");

const listOf =
  (kind: RecordKind): AppRouteHandler<typeof routes.listProductComponents> =>
  async (c) => {
    const { id } = c.req.valid("param");
    const { page, size } = c.req.valid("query");
    const found = await readComponentPage(c.get("services"), id, kind, { page, size });
    if (!found) throw missing(kind);
    const viewer = c.get("user");
    return jsonWithEtag(
      c,
      pageEnvelope(
        found.rows.map((row) => toComponentSummary(row, viewer)),
        found.total,
        { page, size },
      ),
    );
  };

// Written as JSON text member by member (componentTreeJson), not built as objects and serialised:
// a tree of 1,000 spent most of its time there (bench/README.md, Issue 24).
const treeOf =
  (kind: RecordKind): AppRouteHandler<typeof routes.getProductComponentTree> =>
  async (c) => {
    const { id } = c.req.valid("param");
    const rows = await readComponentTreeSummaries(c.get("services"), id, kind, c.req.valid("query").recursion_depth);
    if (!rows) throw missing(kind);
    return jsonTextWithEtag<routes.ComponentTreeNode[]>(c, componentTreeJson(id, rows, c.get("user")));
  };

export const listProductComponents = listOf("product");
export const listSubcomponents = listOf("component");
export const getProductComponentTree = treeOf("product");
export const getComponentTree = treeOf("component");
