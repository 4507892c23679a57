import { sql } from "drizzle-orm";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
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

/** Columns of `VideoRow`, for SELECT and RETURNING. */
export const VIDEO_COLUMNS = sql.raw("id, url, title, description, video_metadata, created_at");
const productStatement = (productId: number) => sql`SELECT owner_id FROM products WHERE id = ${productId} AND parent_id IS NULL`;

/** The videos of a base product, by id (creation order), in one round trip. */
export async function readVideos(svc: Pick<Services, "db">, productId: number): Promise<VideoRow[]> {
  const [products, videos] = await batchRows<[{ owner_id: number }, VideoRow]>(svc.db, [
    productStatement(productId),
    sql`SELECT ${VIDEO_COLUMNS} FROM videos WHERE product_id = ${productId} ORDER BY id`,
  ]);
  if (!products[0]) throw productMissing();
  return videos;
}

/** One video of a base product. */
export async function readVideo(svc: Pick<Services, "db">, productId: number, videoId: number): Promise<VideoRow> {
  const [products, videos] = await batchRows<[{ owner_id: number }, VideoRow]>(svc.db, [
    productStatement(productId),
    sql`SELECT ${VIDEO_COLUMNS} FROM videos WHERE id = ${videoId} AND product_id = ${productId}`,
  ]);
  if (!products[0]) throw productMissing();
  if (!videos[0]) throw videoMissing();
  return videos[0];
}

const metadataText = (value: Record<string, unknown> | null | undefined) => (value ? JSON.stringify(value) : null);

/**
 * Adds a video while the product has fewer than `MAX_VIDEOS`: the count is checked by the insert
 * itself, so two concurrent adds cannot make six. 409 `VIDEO_LIMIT_REACHED` when full.
 */
export async function addVideo(svc: Pick<Services, "db" | "clock">, productId: number, values: VideoValues): Promise<VideoRow> {
  const now = Math.floor(svc.clock.now() / 1000);
  const [inserted, products] = await batchRows<[VideoRow, { owner_id: number }]>(svc.db, [
    sql`INSERT INTO videos (product_id, url, title, description, video_metadata, created_at, updated_at)
        SELECT p.id, ${values.url}, ${values.title ?? null}, ${values.description ?? null}, ${metadataText(values.video_metadata)}, ${now}, ${now}
        FROM products p WHERE p.id = ${productId} AND p.parent_id IS NULL
          AND (SELECT count(*) FROM videos WHERE product_id = ${productId}) < ${MAX_VIDEOS}
        RETURNING ${VIDEO_COLUMNS}`,
    productStatement(productId),
  ]);
  if (inserted[0]) return inserted[0];
  if (!products[0]) throw productMissing();
  throw new ApiError(409, { code: "VIDEO_LIMIT_REACHED", detail: `A base product holds at most ${MAX_VIDEOS} videos; delete one first.` });
}

/** Changes the members given; the rest stay. */
export async function updateVideo(
  svc: Pick<Services, "db" | "clock">,
  productId: number,
  videoId: number,
  values: Partial<VideoValues>,
): Promise<VideoRow> {
  const sets = [sql`updated_at = ${Math.floor(svc.clock.now() / 1000)}`];
  if (values.url !== undefined) sets.push(sql`url = ${values.url}`);
  if (values.title !== undefined) sets.push(sql`title = ${values.title}`);
  if (values.description !== undefined) sets.push(sql`description = ${values.description}`);
  if (values.video_metadata !== undefined) sets.push(sql`video_metadata = ${metadataText(values.video_metadata)}`);
  const rows = await svc.db.all<VideoRow>(
    sql`UPDATE videos SET ${sql.join(sets, sql`, `)} WHERE id = ${videoId} AND product_id = ${productId} RETURNING ${VIDEO_COLUMNS}`,
  );
  if (!rows[0]) throw videoMissing();
  return rows[0];
}

/** Deletes one video of the product. */
export async function deleteVideo(svc: Pick<Services, "db">, productId: number, videoId: number): Promise<void> {
  const rows = await svc.db.all(sql`DELETE FROM videos WHERE id = ${videoId} AND product_id = ${productId} RETURNING id`);
  if (!rows[0]) throw videoMissing();
}
