import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows, type Db } from "../../db/client";
import { columnList, columnsOf } from "../../db/rows";
import { products, videos } from "../../db/schema";
import { ApiError, notFound } from "../../lib/problem";
import type { VideoRow } from "./records";

// Videos are edited apart from their product: no write here touches the `products` row, so the
// product's `version` stays (spec: media edits do not change it).

/** Most videos one base product holds (decisions.md). */
export const MAX_VIDEOS = 5;

/** A video as a client sends it. */
export interface VideoValues {
  url: string;
  title?: string | null;
  description?: string | null;
  video_metadata?: Record<string, unknown> | null;
}

export const productMissing = () => notFound("No base product has this id.");
export const videoMissing = () => notFound("The product has no video with this id.");

const VIDEO_FIELDS = ["id", "url", "title", "description", "video_metadata", "created_at"] as const;
/** Columns of `VideoRow`, for the builder's selects and `returning`. */
const videoColumns = columnsOf(videos, VIDEO_FIELDS);
/** The same columns for hand-written SQL (SELECT and RETURNING). */
export const VIDEO_COLUMNS = columnList(VIDEO_FIELDS);

const productStatement = (db: Db, productId: number) =>
  db
    .select({ owner_id: products.owner_id })
    .from(products)
    .where(and(eq(products.id, productId), isNull(products.parent_id)));

const isVideo = (productId: number, videoId: number) => and(eq(videos.id, videoId), eq(videos.product_id, productId));

/** The videos of a base product, by id (creation order), in one round trip. */
export async function readVideos(svc: Pick<Services, "db">, productId: number): Promise<VideoRow[]> {
  const [found, rows] = await batchRows<[{ owner_id: number }, VideoRow]>(svc.db, [
    productStatement(svc.db, productId),
    svc.db.select(videoColumns).from(videos).where(eq(videos.product_id, productId)).orderBy(asc(videos.id)),
  ]);
  if (!found[0]) throw productMissing();
  return rows;
}

/** One video of a base product. */
export async function readVideo(svc: Pick<Services, "db">, productId: number, videoId: number): Promise<VideoRow> {
  const [found, rows] = await batchRows<[{ owner_id: number }, VideoRow]>(svc.db, [
    productStatement(svc.db, productId),
    svc.db.select(videoColumns).from(videos).where(isVideo(productId, videoId)),
  ]);
  if (!found[0]) throw productMissing();
  if (!rows[0]) throw videoMissing();
  return rows[0];
}

const metadataText = (value: Record<string, unknown> | null | undefined) => (value ? JSON.stringify(value) : null);

/**
 * Adds a video while the product has fewer than `MAX_VIDEOS`: the count is checked by the insert
 * itself, so two concurrent adds cannot make six. 409 `VIDEO_LIMIT_REACHED` when full.
 */
export async function addVideo(svc: Pick<Services, "db" | "clock">, productId: number, values: VideoValues): Promise<VideoRow> {
  const now = Math.floor(svc.clock.now() / 1000);
  const [inserted, found] = await batchRows<[VideoRow, { owner_id: number }]>(svc.db, [
    // Raw: INSERT … SELECT: the count limit is the insert's own condition, so concurrent adds cannot pass it together.
    sql`INSERT INTO videos (product_id, url, title, description, video_metadata, created_at, updated_at)
        SELECT p.id, ${values.url}, ${values.title ?? null}, ${values.description ?? null}, ${metadataText(values.video_metadata)}, ${now}, ${now}
        FROM products p WHERE p.id = ${productId} AND p.parent_id IS NULL
          AND (SELECT count(*) FROM videos WHERE product_id = ${productId}) < ${MAX_VIDEOS}
        RETURNING ${VIDEO_COLUMNS}`,
    productStatement(svc.db, productId),
  ]);
  if (inserted[0]) return inserted[0];
  if (!found[0]) throw productMissing();
  throw new ApiError(409, { code: "VIDEO_LIMIT_REACHED", detail: `A base product holds at most ${MAX_VIDEOS} videos; delete one first.` });
}

/** Changes the members given; the rest stay. */
export async function updateVideo(
  svc: Pick<Services, "db" | "clock">,
  productId: number,
  videoId: number,
  values: Partial<VideoValues>,
): Promise<VideoRow> {
  const rows = await svc.db.all<VideoRow>(
    svc.db
      .update(videos)
      .set({
        updated_at: new Date(svc.clock.now()),
        url: values.url,
        title: values.title,
        description: values.description,
        video_metadata: values.video_metadata,
      })
      .where(isVideo(productId, videoId))
      .returning(videoColumns),
  );
  if (!rows[0]) throw videoMissing();
  return rows[0];
}

/** Deletes one video of the product. */
export async function deleteVideo(svc: Pick<Services, "db">, productId: number, videoId: number): Promise<void> {
  const rows = await svc.db.all(svc.db.delete(videos).where(isVideo(productId, videoId)).returning({ id: videos.id }));
  if (!rows[0]) throw videoMissing();
}
