import type { z } from "@hono/zod-openapi";
import { ownerVisibleTo } from "../../auth/permissions";
import { isoSeconds } from "../../lib/time";
import type { SessionUser } from "../../services/sessions";
import type { BomRow, RecordDetail, RecordRow, VideoRow } from "../../services/product-records";
import { circularityOut } from "../../services/product-fields";
import type { BomEntrySchema, ComponentDetailSchema, ComponentSummarySchema, ProductDetailSchema, ProductSummarySchema, VideoSchema } from "./products.schemas";

type ProductSummary = z.infer<typeof ProductSummarySchema>;
type ComponentSummary = z.infer<typeof ComponentSummarySchema>;

/** A record's own fields as the API shows them to `viewer`: the owner only when their profile visibility allows. */
export function toProductSummary(row: RecordRow, viewer: SessionUser | null): ProductSummary {
  const visible = ownerVisibleTo(viewer, { ownerId: row.owner_id, ownerUsername: row.owner_username, ownerVisibility: row.owner_visibility });
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
  };
}

export function toComponentSummary(row: RecordRow, viewer: SessionUser | null): ComponentSummary {
  return { ...toProductSummary(row, viewer), parent_id: row.parent_id!, amount_in_parent: row.amount_in_parent! };
}

function toBomEntry(row: Omit<BomRow, "product_id">): z.infer<typeof BomEntrySchema> {
  return { material_id: row.material_id, material_name: row.material_name, quantity: row.quantity, unit: row.unit };
}

function toVideo(row: VideoRow): z.infer<typeof VideoSchema> {
  return {
    id: row.id,
    url: row.url,
    title: row.title,
    description: row.description,
    video_metadata: row.video_metadata ? (JSON.parse(row.video_metadata) as Record<string, unknown>) : null,
    created_at: isoSeconds(row.created_at * 1000),
  };
}

function embeds(detail: RecordDetail, viewer: SessionUser | null) {
  return {
    product_type: detail.row.product_type_id !== null && detail.row.product_type_name !== null
      ? { id: detail.row.product_type_id, name: detail.row.product_type_name }
      : null,
    images: [],
    files: [],
    bill_of_materials: detail.bom.map(toBomEntry),
    components: detail.components.map((row) => toComponentSummary(row, viewer)),
  };
}

export function toProductDetail(detail: RecordDetail, viewer: SessionUser | null): z.infer<typeof ProductDetailSchema> {
  return { ...toProductSummary(detail.row, viewer), ...embeds(detail, viewer), videos: detail.videos.map(toVideo) };
}

export function toComponentDetail(detail: RecordDetail, viewer: SessionUser | null): z.infer<typeof ComponentDetailSchema> {
  return { ...toComponentSummary(detail.row, viewer), ...embeds(detail, viewer) };
}
