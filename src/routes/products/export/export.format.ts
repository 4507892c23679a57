import { ownerVisibleTo } from "../../../auth/permissions";
import { CSV_BOM, type CsvValue, csvRow } from "../../../lib/csv";
import { isoSeconds } from "../../../lib/time";
import { toFile, toImage, toVideo } from "../../../schemas/media";
import type { FileRow, ImageRow } from "../../../services/media/records";
import { uploadUrl } from "../../../services/media/records";
import { nestRows } from "../../../services/products/component-tree";
import type { ExportFormat, ExportRow, ExportTree } from "../../../services/products/export";
import { circularityOut } from "../../../services/products/fields";
import type { BomRow, VideoRow } from "../../../services/products/records";
import { type ReadView, toBomEntry, toComponentSummary, toProductSummary, toProductTypeRef } from "../products.mappers";

/** CSV columns in the order of decisions.md (Exports), which follows the dataset release's records table. */
export const CSV_COLUMNS = [
  "id",
  "parent_id",
  "amount_in_parent",
  "owner_username",
  "name",
  "description",
  "brand",
  "model",
  "product_type_id",
  "product_type_name",
  "weight_g",
  "height_cm",
  "width_cm",
  "depth_cm",
  "volume_cm3",
  "circularity_properties",
  "created_at",
  "updated_at",
  "image_urls",
] as const;

/** One CSV record's cells, in `CSV_COLUMNS` order. The owner is empty when hidden from the viewer. */
export function csvCells(row: ExportRow, { viewer, origin }: ReadView): CsvValue[] {
  const owner = { ownerId: row.owner_id, ownerUsername: row.owner_username, ownerVisibility: row.owner_visibility };
  const circularity = circularityOut(row.circularity_properties);
  const images = JSON.parse(row.images_json) as Pick<ImageRow, "storage_key">[];
  return [
    row.id,
    row.parent_id,
    row.amount_in_parent,
    ownerVisibleTo(viewer, owner) ? row.owner_username : null,
    row.name,
    row.description,
    row.brand,
    row.model,
    row.product_type_id,
    row.product_type_name,
    row.weight_g,
    row.height_cm,
    row.width_cm,
    row.depth_cm,
    row.volume_cm3,
    circularity ? JSON.stringify(circularity) : null,
    isoSeconds(row.created_at * 1000),
    isoSeconds(row.updated_at * 1000),
    images.map((image) => uploadUrl(origin, "images", image.storage_key)).join(" "),
  ];
}

function parsed<T>(text: string | null): T[] {
  return text ? (JSON.parse(text) as T[]) : [];
}

function embedsOf(row: ExportRow, origin: string) {
  return {
    product_type: toProductTypeRef(row),
    images: parsed<ImageRow>(row.images_json).map((image) => toImage(image, origin)),
    files: parsed<FileRow>(row.files_json).map((file) => toFile(file, origin)),
    bill_of_materials: parsed<Omit<BomRow, "product_id">>(row.bom_json).map(toBomEntry),
  };
}

/**
 * A base product and everything below it in the shape of the detail read, except that
 * `components` holds full records (with their own embeds and components) at every depth.
 */
export function jsonTree(tree: ExportTree, view: ReadView) {
  const [root, ...below] = tree;
  const components = nestRows(root!.id, below, (row) => ({ ...toComponentSummary(row, view.viewer), ...embedsOf(row, view.origin) }));
  return {
    ...toProductSummary(root!, view.viewer),
    ...embedsOf(root!, view.origin),
    components,
    videos: parsed<VideoRow>(root!.videos_json).map(toVideo),
  };
}

/**
 * The export document, a piece per chunk: CSV (BOM and header first, CRLF rows) or a JSON
 * array of `jsonTree`s, written as the chunks arrive.
 */
export async function* exportDocument(
  chunks: AsyncIterable<ExportTree[]>,
  format: ExportFormat,
  view: ReadView,
): AsyncGenerator<string, void, undefined> {
  if (format === "csv") {
    yield CSV_BOM + csvRow(CSV_COLUMNS);
    for await (const trees of chunks) {
      let piece = "";
      for (const tree of trees) for (const row of tree) piece += csvRow(csvCells(row, view));
      yield piece;
    }
    return;
  }
  let first = true;
  yield "[";
  for await (const trees of chunks) {
    const items = trees.map((tree) => JSON.stringify(jsonTree(tree, view)));
    if (items.length === 0) continue;
    yield (first ? "" : ",") + items.join(",");
    first = false;
  }
  yield "]";
}
