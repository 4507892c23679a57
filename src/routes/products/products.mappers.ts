import type { z } from "@hono/zod-openapi";
import { ownerVisibleTo } from "../../auth/permissions";
import type { SessionUser } from "../../auth/session-user";
import { isoSeconds } from "../../lib/time";
import { toFile, toImage, toVideo } from "../../schemas/media";
import { visibleMedia } from "../../services/media/records";
import { nestedJson, type TreeSummaryRow } from "../../services/products/component-tree";
import { circularityOut } from "../../services/products/fields";
import type { BomRow, RecordDetail, RecordRow } from "../../services/products/records";
import type {
  BomEntrySchema,
  ComponentDetailSchema,
  ComponentSummarySchema,
  ProductDetailSchema,
  ProductSummarySchema,
} from "./products.schemas";

type ProductSummary = z.infer<typeof ProductSummarySchema>;
type ComponentSummary = z.infer<typeof ComponentSummarySchema>;

/** A record's own fields as the API shows them to `viewer`: the owner only when their profile visibility allows. */
export function toProductSummary(row: RecordRow, viewer: SessionUser | null): ProductSummary {
  const visible = ownerVisibleTo(viewer, {
    ownerId: row.owner_id,
    ownerUsername: row.owner_username,
    ownerVisibility: row.owner_visibility,
  });
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    brand: row.brand,
    model: row.model,
    weight_g: row.weight_g,
    height_cm: row.height_cm,
    width_cm: row.width_cm,
    depth_cm: row.depth_cm,
    volume_cm3: row.volume_cm3,
    circularity_properties: circularityOut(row.circularity_properties),
    product_type_id: row.product_type_id,
    version: row.version,
    owner_id: visible ? row.owner_id : null,
    owner_username: visible ? row.owner_username : null,
    created_at: isoSeconds(row.created_at * 1000),
    updated_at: isoSeconds(row.updated_at * 1000),
    // Images arrive with the media routes; until then no record has a thumbnail.
    thumbnail_url: null,
    quality_score: row.quality_score,
  };
}

export function toComponentSummary(row: RecordRow, viewer: SessionUser | null): ComponentSummary {
  return { ...toProductSummary(row, viewer), parent_id: row.parent_id!, amount_in_parent: row.amount_in_parent! };
}

const json = (value: string | number | null) => (value === null ? "null" : JSON.stringify(value));

/**
 * The JSON text of a component tree for `viewer`: byte for byte
 * `JSON.stringify(nestRows(rootId, rows, (row) => toComponentSummary(row, viewer)))`, written
 * member by member without building the objects (a tree of 1,000 spent most of its time building,
 * nesting and serialising them; bench/README.md, Issue 24). Members in `toComponentSummary`'s order.
 */
export function componentTreeJson(rootId: number, rows: readonly TreeSummaryRow[], viewer: SessionUser | null): string {
  // Records written together share their timestamps; each is formatted once.
  const times = new Map<number, string>();
  const time = (seconds: number) => {
    let text = times.get(seconds);
    if (text === undefined) times.set(seconds, (text = JSON.stringify(isoSeconds(seconds * 1000))));
    return text;
  };
  return nestedJson(rootId, rows, (row) => {
    const visible = ownerVisibleTo(viewer, {
      ownerId: row.owner_id,
      ownerUsername: row.owner_username,
      ownerVisibility: row.owner_visibility,
    });
    const circularity = circularityOut(row.circularity_properties);
    return (
      `{"id":${row.id},"name":${json(row.name)},"description":${json(row.description)},"brand":${json(row.brand)},"model":${json(row.model)},` +
      `"weight_g":${json(row.weight_g)},"height_cm":${json(row.height_cm)},"width_cm":${json(row.width_cm)},"depth_cm":${json(row.depth_cm)},` +
      `"volume_cm3":${json(row.volume_cm3)},"circularity_properties":${circularity === null ? "null" : JSON.stringify(circularity)},` +
      `"product_type_id":${json(row.product_type_id)},"version":${row.version},` +
      `"owner_id":${visible ? row.owner_id : "null"},"owner_username":${visible ? json(row.owner_username) : "null"},` +
      `"created_at":${time(row.created_at)},"updated_at":${time(row.updated_at)},"thumbnail_url":null,"quality_score":${row.quality_score},` +
      `"parent_id":${json(row.parent_id)},"amount_in_parent":${json(row.amount_in_parent)}`
    );
  });
}

/** What a read shows depends on who asks (the owner's visibility) and where (uploads are absolute URLs on the request's origin). */
export interface ReadView {
  viewer: SessionUser | null;
  origin: string;
}

export function toBomEntry(row: Omit<BomRow, "product_id">): z.infer<typeof BomEntrySchema> {
  return { material_id: row.material_id, material_name: row.material_name, quantity: row.quantity, unit: row.unit };
}

/** `{id, name}` of the record's product type, or null. */
export function toProductTypeRef(row: Pick<RecordRow, "product_type_id" | "product_type_name">) {
  return row.product_type_id !== null && row.product_type_name !== null ? { id: row.product_type_id, name: row.product_type_name } : null;
}

function embeds(detail: RecordDetail, { viewer, origin }: ReadView) {
  return {
    product_type: toProductTypeRef(detail.row),
    images: visibleMedia(detail.images, viewer, detail.row.owner_id).map((row) => toImage(row, origin)),
    files: visibleMedia(detail.files, viewer, detail.row.owner_id).map((row) => toFile(row, origin)),
    bill_of_materials: detail.bom.map(toBomEntry),
    components: detail.components.map((row) => toComponentSummary(row, viewer)),
  };
}

export function toProductDetail(detail: RecordDetail, view: ReadView): z.infer<typeof ProductDetailSchema> {
  return { ...toProductSummary(detail.row, view.viewer), ...embeds(detail, view), videos: detail.videos.map(toVideo) };
}

export function toComponentDetail(detail: RecordDetail, view: ReadView): z.infer<typeof ComponentDetailSchema> {
  return { ...toComponentSummary(detail.row, view.viewer), ...embeds(detail, view) };
}
