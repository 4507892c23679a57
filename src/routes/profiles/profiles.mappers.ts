import type { z } from "@hono/zod-openapi";
import { isoSeconds } from "../../lib/time";
import type { Profile } from "../../services/accounts/profiles";
import type { ProfileSchema } from "./profiles.routes";

/** A profile as `GET /v1/profiles/{username}` shows it. */
export function toPublicProfile(profile: Profile): z.infer<typeof ProfileSchema> {
  return {
    username: profile.username,
    created_at: isoSeconds(profile.createdAt * 1000),
    product_count: profile.productCount,
    // Rounding whole grams is rounding kilograms to 3 decimals, without binary-fraction noise (1.2345 -> 1.235).
    total_weight_kg: Math.round(profile.totalWeightG) / 1000,
    image_count: profile.imageCount,
    top_category: profile.topCategory,
  };
}
