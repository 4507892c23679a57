import { and, eq, sql } from "drizzle-orm";
import { ownerVisibleTo } from "../../auth/permissions";
import type { SessionUser } from "../../auth/session-user";
import type { CarriedViewer } from "../../auth/viewer";
import type { Services } from "../../container";
import { batchRows } from "../../db/client";
import { columnsOf, type RowOf } from "../../db/rows";
import { users } from "../../db/schema";
import type { PageQuery } from "../../lib/pagination";
import { SHOWN_MEDIA_CONDITION } from "../media/records";
import { type CountRow, type ProductFilter, type ProductListRow, productListStatements } from "../products/query";

/**
 * Public profiles and one user's product list. Both answer "absent" for an account the viewer
 * may not see, so a hidden profile is indistinguishable from a missing one (404, never 403).
 */

/** A profile as its owner's visibility lets the viewer see it, with totals over the owner's base products. */
export interface Profile {
  username: string;
  /** Unix seconds. */
  createdAt: number;
  productCount: number;
  /** Sum of the base products' `weight_g`; products without a weight add nothing. */
  totalWeightG: number;
  /** Scanned images on the user's base products and components. */
  imageCount: number;
  /** The category linked to the product types of most of the user's base products (ties: by name); null without any. */
  topCategory: string | null;
}

type AccountRow = RowOf<typeof users, "id" | "username" | "created_at" | "profile_visibility">;

type ProfileRow = AccountRow & {
  product_count: number;
  total_weight_g: number;
  image_count: number;
  top_category: string | null;
};

// Only live, real accounts have a profile: the system account that holds deleted users' products
// is inactive as well, but says so explicitly, and a deactivated account shows nothing.
const PROFILED = sql`${users.is_active} = 1 AND ${users.is_system} = 0`;

/** Whether `viewer` may see `account` at all: the owner visibility rule of the spec, applied to the whole profile. */
function visibleTo(viewer: SessionUser | null, account: AccountRow): boolean {
  return ownerVisibleTo(viewer, { ownerId: account.id, ownerUsername: account.username, ownerVisibility: account.profile_visibility });
}

/**
 * The profile of `username`, or null when there is no such live account or the viewer may not
 * see it. One round trip: the account and its totals in one statement. The product totals count
 * base products only (components are parts of them); `image_count` counts the scanned images of
 * all their records; `total()` is 0.0 over no rows and skips nulls.
 */
export async function readProfile(svc: Pick<Services, "db">, username: string, viewer: CarriedViewer): Promise<Profile | null> {
  const [[rows], user] = await viewer.after(
    batchRows<[ProfileRow]>(svc.db, [
      // Raw: the totals are correlated sub-selects over four tables, one statement with the account.
      sql`SELECT users.id, users.username, users.created_at, users.profile_visibility,
          (SELECT count(*) FROM products p WHERE p.owner_id = users.id AND p.parent_id IS NULL) AS product_count,
          (SELECT total(p.weight_g) FROM products p WHERE p.owner_id = users.id AND p.parent_id IS NULL) AS total_weight_g,
          (SELECT count(*) FROM products p JOIN images i ON i.product_id = p.id
            WHERE p.owner_id = users.id AND i.${sql.raw(SHOWN_MEDIA_CONDITION)}) AS image_count,
          (SELECT c.name FROM products p
             JOIN product_type_categories l ON l.product_type_id = p.product_type_id
             JOIN categories c ON c.id = l.category_id
           WHERE p.owner_id = users.id AND p.parent_id IS NULL
           GROUP BY c.id ORDER BY count(*) DESC, c.name LIMIT 1) AS top_category
        FROM users WHERE users.username = ${username} AND ${PROFILED}`,
    ]),
  );
  const row = rows[0];
  if (!row || !visibleTo(user, row)) return null;
  return {
    username: row.username,
    createdAt: row.created_at,
    productCount: row.product_count,
    totalWeightG: row.total_weight_g,
    imageCount: row.image_count,
    topCategory: row.top_category,
  };
}

/**
 * One page of `userId`'s base products matching `filter`, and their total, or null when there is
 * no such live account or the viewer may not see it. One round trip: the account is looked up in
 * the same batch as the list, whose rows are dropped when the account turns out hidden.
 */
export async function listUserProducts(
  svc: Pick<Services, "db">,
  userId: number,
  filter: ProductFilter,
  page: PageQuery,
  viewer: CarriedViewer,
): Promise<{ rows: ProductListRow[]; total: number; viewer: SessionUser | null } | null> {
  // No `owner=me` here (the route refuses it), so the statements are the same for every viewer.
  const [[accounts, rows, total], user] = await viewer.after(
    batchRows<[AccountRow, ProductListRow, CountRow]>(svc.db, [
      svc.db
        .select(columnsOf(users, ["id", "username", "created_at", "profile_visibility"]))
        .from(users)
        .where(and(eq(users.id, userId), PROFILED)),
      ...productListStatements({ ...filter, ownerId: userId, ownerMe: false }, null, page),
    ]),
  );
  const account = accounts[0];
  if (!account || !visibleTo(user, account)) return null;
  return { rows, total: total[0]?.total ?? 0, viewer: user };
}
