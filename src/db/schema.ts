import { sql } from "drizzle-orm";
import { type AnySQLiteColumn, check, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { CHECK_SQL, checkColumn, QUALITY_SCORE_SQL, type QualityCheckCode } from "../lib/record-quality";

/** Unix seconds: the API's timestamps have seconds precision, and SQLite date functions read them directly. */
export const timestamps = {
  created_at: integer("created_at", { mode: "timestamp" }).notNull().default(sql`(unixepoch())`),
  updated_at: integer("updated_at", { mode: "timestamp" }).notNull().default(sql`(unixepoch())`),
};

export const ROLES = ["contributor", "lab"] as const;
export const PROFILE_VISIBILITIES = ["public", "community", "private"] as const;

export const users = sqliteTable(
  "users",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** Lower-cased address as entered; unique, so addresses are unique case-insensitively. */
    email: text("email").notNull(),
    /** Canonical form (provider-specific dots and +tags removed) so aliases of one mailbox cannot register twice. */
    email_canonical: text("email_canonical").notNull(),
    username: text("username").notNull(),
    /** Argon2id PHC string; null for accounts that sign in only through an identity provider. */
    hashed_password: text("hashed_password"),
    is_active: integer("is_active", { mode: "boolean" }).notNull().default(true),
    is_verified: integer("is_verified", { mode: "boolean" }).notNull().default(false),
    is_superuser: integer("is_superuser", { mode: "boolean" }).notNull().default(false),
    role: text("role", { enum: ROLES }).notNull().default("contributor"),
    profile_visibility: text("profile_visibility", { enum: PROFILE_VISIBILITIES }).notNull().default("public"),
    last_login_at: integer("last_login_at", { mode: "timestamp" }),
    /**
     * Revocation epoch in milliseconds of the database clock: an access token issued before it is
     * refused. Stamped by every revocation (docs/storage.md, Tokens).
     */
    tokens_valid_after: integer("tokens_valid_after").notNull().default(0),
    /** Upload usage charged to this account, kept next to the quota check that reads it. */
    upload_file_count: integer("upload_file_count").notNull().default(0),
    upload_total_bytes: integer("upload_total_bytes").notNull().default(0),
    /** The TOTP seed, sealed with AES-256-GCM under DATA_ENCRYPTION_KEY (context `totp:<id>`); null without TOTP. */
    totp_secret: text("totp_secret"),
    /** Unix seconds; set together with `totp_secret`. */
    totp_enabled_at: integer("totp_enabled_at"),
    /** The last accepted TOTP time step: a code of this step or an earlier one is a replay. */
    totp_last_step: integer("totp_last_step"),
    /**
     * A random id written by each regeneration of the recovery codes (null until the first one):
     * a regeneration replaces the codes only while this is still what it read, so of two
     * concurrent ones exactly one wins (compare-and-set).
     */
    recovery_codes_generation: text("recovery_codes_generation"),
    /** The one inactive account that holds the products of deleted accounts. */
    is_system: integer("is_system", { mode: "boolean" }).notNull().default(false),
    /**
     * The contributor terms the user accepted (their version) and when; both null when never
     * accepted or withdrawn. Dataset releases hold only contributions of owners who accepted.
     */
    terms_accepted_version: integer("terms_accepted_version"),
    terms_accepted_at: integer("terms_accepted_at"),
    /** The account's ORCID iD (`0000-0002-1825-0097` form, check digit verified); null when none. */
    orcid: text("orcid"),
    /**
     * Opted in to be named in releases (decisions.md, "Publishing releases"): a release whose
     * snapshot holds records of the account credits it by username and ORCID. Off by default.
     */
    release_credit: integer("release_credit", { mode: "boolean" }).notNull().default(false),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("users_one_system_account").on(t.is_system).where(sql`${t.is_system} = 1`),
    uniqueIndex("users_email_unique").on(t.email),
    uniqueIndex("users_email_canonical_unique").on(t.email_canonical),
    uniqueIndex("users_username_unique").on(t.username),
    check("users_role_check", sql`${t.role} IN ('contributor', 'lab')`),
    check("users_profile_visibility_check", sql`${t.profile_visibility} IN ('public', 'community', 'private')`),
    check("users_superuser_is_lab", sql`${t.is_superuser} = 0 OR ${t.role} = 'lab'`),
  ],
);

export const productTypes = sqliteTable(
  "product_types",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    description: text("description"),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("product_types_name_unique").on(t.name),
    // The list's order by type name walks the types in this order (migration 0024).
    index("product_types_name_nocase_idx").on(sql`${t.name} COLLATE NOCASE`),
  ],
);

/** Units of bill-of-materials quantities; `toBase` converts to kilograms (mass) or metres (length). */
export const units = sqliteTable(
  "units",
  {
    code: text("code").primaryKey(),
    name: text("name").notNull(),
    dimension: text("dimension", { enum: ["mass", "length"] }).notNull(),
    to_base: real("to_base").notNull(),
    position: integer("position").notNull(),
  },
  (t) => [check("units_dimension_check", sql`${t.dimension} IN ('mass', 'length')`)],
);

/** The generated column of a quality check: 1 pass, 0 fail, null not applicable. */
function checkStatus(code: QualityCheckCode) {
  return integer(checkColumn(code)).generatedAlwaysAs(sql.raw(CHECK_SQL[code]), { mode: "virtual" });
}

/**
 * Base products and components share this table: a base product has no parent, a component has
 * a parent (a base product or another component) and an amount in it. The API exposes the two
 * kinds as separate resources.
 */
export const products = sqliteTable(
  "products",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    parent_id: integer("parent_id").references((): AnySQLiteColumn => products.id, { onDelete: "cascade" }),
    owner_id: integer("owner_id")
      .notNull()
      .references(() => users.id),
    name: text("name").notNull(),
    description: text("description"),
    brand: text("brand"),
    model: text("model"),
    weight_g: real("weight_g"),
    height_cm: real("height_cm"),
    width_cm: real("width_cm"),
    depth_cm: real("depth_cm"),
    volume_cm3: real("volume_cm3").generatedAlwaysAs(sql`height_cm * width_cm * depth_cm`, { mode: "virtual" }),
    /** JSON object with optional recyclability, disassemblability, remanufacturability notes. */
    circularity_properties: text("circularity_properties", { mode: "json" }).$type<
      Partial<Record<"recyclability" | "disassemblability" | "remanufacturability", string>>
    >(),
    product_type_id: integer("product_type_id").references(() => productTypes.id, {
      onDelete: "set null",
    }),
    amount_in_parent: integer("amount_in_parent"),
    /** Levels below the base product: 0 for a base product, at most 10 for a component. */
    depth: integer("depth").notNull().default(0),
    /** Optimistic-concurrency counter: bumps when one of the record's own fields changes. */
    version: integer("version").notNull().default(1),
    /** The base product the record belongs to (itself for a base product); set by a trigger on insert (migration 0020). */
    root_id: integer("root_id"),
    // What the quality checks read of a record's neighbours (docs/quality.md), kept current by
    // triggers (migration 0023) in the transaction of every write to its direct components, its
    // bill of materials and its images, so that a check never walks anything at read time.
    /** Direct components. */
    component_count: integer("component_count").notNull().default(0),
    /** Direct components without `weight_g`. */
    unweighed_component_count: integer("unweighed_component_count").notNull().default(0),
    /** Sum of `weight_g x amount_in_parent` over the direct components that have a weight; null when none has. */
    components_mass_g: real("components_mass_g"),
    /** Bill-of-materials entries. */
    bom_entry_count: integer("bom_entry_count").notNull().default(0),
    /** Bill-of-materials entries in a mass unit (`kg`, `g`). */
    bom_mass_entry_count: integer("bom_mass_entry_count").notNull().default(0),
    /** Sum of the mass entries in grams; null when there is none. */
    bom_mass_g: real("bom_mass_g"),
    /** Images that passed the malware scan (`clean`); pending and rejected ones do not count. */
    clean_image_count: integer("clean_image_count").notNull().default(0),
    // The checks (docs/quality.md; their rules: src/lib/record-quality.ts): 1 pass, 0 fail, null
    // not applicable. Computed from the columns above when read, never stored.
    check_has_product_type: checkStatus("has_product_type"),
    check_has_weight: checkStatus("has_weight"),
    check_has_dimensions: checkStatus("has_dimensions"),
    check_has_image: checkStatus("has_image"),
    check_has_breakdown: checkStatus("has_breakdown"),
    check_components_mass_balance: checkStatus("components_mass_balance"),
    check_materials_mass_balance: checkStatus("materials_mass_balance"),
    check_density_plausible: checkStatus("density_plausible"),
    check_has_circularity_notes: checkStatus("has_circularity_notes"),
    /** Passes / (passes + fails) of the checks above, 3 decimals; 1 when no check applies. */
    quality_score: real("quality_score").generatedAlwaysAs(sql.raw(QUALITY_SCORE_SQL), { mode: "virtual" }),
    ...timestamps,
  },
  (t) => [
    index("products_owner_idx").on(t.owner_id),
    index("products_parent_idx").on(t.parent_id),
    index("products_root_idx").on(t.root_id),
    index("products_base_created_idx").on(t.created_at).where(sql`${t.parent_id} IS NULL`),
    index("products_base_brand_created_idx").on(t.brand, t.parent_id, t.created_at).where(sql`${t.parent_id} IS NULL`),
    // `quality_score[lt|ge]` over base products (docs/product-list.md).
    index("products_base_quality_idx").on(t.quality_score, t.created_at).where(sql`${t.parent_id} IS NULL`),
    // One index over base products per order of the list and per filter that can drive it (migration 0024,
    // docs/product-list.md "Plans"): D1 keeps no planner statistics, so the query builder names them.
    index("products_base_updated_idx").on(t.updated_at).where(sql`${t.parent_id} IS NULL`),
    index("products_base_name_idx").on(sql`${t.name} COLLATE NOCASE`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_brand_idx").on(sql`${t.brand} COLLATE NOCASE`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_model_idx").on(sql`${t.model} COLLATE NOCASE`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_type_idx").on(t.product_type_id).where(sql`${t.parent_id} IS NULL`),
    // A one- or two-character `name[ilike]`/`model[ilike]` found where no trigram starts with it: in the
    // last two characters (migration 0027, docs/product-list.md "Plans").
    index("products_base_name_end_idx").on(sql`lower(substr(${t.name}, -2))`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_name_last_idx").on(sql`lower(substr(${t.name}, -1))`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_model_end_idx").on(sql`lower(substr(${t.model}, -2))`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_model_last_idx").on(sql`lower(substr(${t.model}, -1))`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_weight_idx").on(t.weight_g).where(sql`${t.parent_id} IS NULL`),
    index("products_base_owner_idx").on(t.owner_id, t.created_at).where(sql`${t.parent_id} IS NULL`),
    // A brand, type or owner filter with each order: the filter's value(s) sought, the order walked.
    index("products_base_owner_updated_idx").on(t.owner_id, t.updated_at).where(sql`${t.parent_id} IS NULL`),
    index("products_base_owner_name_idx").on(t.owner_id, sql`${t.name} COLLATE NOCASE`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_owner_model_idx").on(t.owner_id, sql`${t.model} COLLATE NOCASE`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_owner_brand_idx").on(t.owner_id, sql`${t.brand} COLLATE NOCASE`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_brand_updated_idx").on(t.brand, t.updated_at).where(sql`${t.parent_id} IS NULL`),
    index("products_base_brand_name_idx").on(t.brand, sql`${t.name} COLLATE NOCASE`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_brand_model_idx").on(t.brand, sql`${t.model} COLLATE NOCASE`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_type_updated_idx").on(t.product_type_id, t.updated_at).where(sql`${t.parent_id} IS NULL`),
    index("products_base_type_name_idx").on(t.product_type_id, sql`${t.name} COLLATE NOCASE`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_type_model_idx").on(t.product_type_id, sql`${t.model} COLLATE NOCASE`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_type_brand_idx").on(t.product_type_id, sql`${t.brand} COLLATE NOCASE`).where(sql`${t.parent_id} IS NULL`),
    index("products_base_type_created_idx").on(t.product_type_id, t.created_at).where(sql`${t.parent_id} IS NULL`),
    check("products_name_length", sql`length(${t.name}) BETWEEN 2 AND 100`),
    check(
      "products_component_amount",
      sql`(${t.parent_id} IS NULL AND ${t.amount_in_parent} IS NULL) OR (${t.parent_id} IS NOT NULL AND ${t.amount_in_parent} BETWEEN 1 AND 1000)`,
    ),
    check(
      "products_depth",
      sql`(${t.parent_id} IS NULL AND ${t.depth} = 0) OR (${t.parent_id} IS NOT NULL AND ${t.depth} BETWEEN 1 AND 10)`,
    ),
    check(
      "products_positive_dimensions",
      sql`(${t.weight_g} IS NULL OR ${t.weight_g} > 0) AND (${t.height_cm} IS NULL OR ${t.height_cm} > 0) AND (${t.width_cm} IS NULL OR ${t.width_cm} > 0) AND (${t.depth_cm} IS NULL OR ${t.depth_cm} > 0)`,
    ),
  ],
);

/**
 * The dataset's quality (`GET /v1/stats/quality`, docs/quality.md), counted as records change: per
 * kind (`base` 1 for base products, 0 for components) and quality profile (each check as `p`, `f`
 * or `-` in the order of the check codes, then `:` and the score's decile 0..10), how many records
 * have it. Kept by triggers (migration 0023), never by the code.
 */
export const qualityCounts = sqliteTable(
  "quality_counts",
  {
    base: integer("base").notNull(),
    profile: text("profile").notNull(),
    records: integer("records").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.base, t.profile] })],
);

/**
 * Refresh tokens, stored only as SHA-256 fingerprints of the random secret. A login starts a
 * family (one session); each refresh adds a row and marks its predecessor rotated, keeping the
 * family's absolute expiry. Rotated rows stay until they expire so that a replay is recognised.
 */
export const refreshTokens = sqliteTable(
  "refresh_tokens",
  {
    fingerprint: text("fingerprint").primaryKey(),
    user_id: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    family_id: text("family_id").notNull(),
    /** Unix seconds: the inactivity expiry of this token (30 days after issue, capped by the session's). */
    expires_at: integer("expires_at").notNull(),
    /** Unix seconds: the absolute end of the session, fixed at login. */
    session_expires_at: integer("session_expires_at").notNull(),
    /**
     * Unix seconds: when the session's sign-in happened, carried through rotations; a step-up
     * without password or TOTP needs it within 10 minutes. Null for sessions from before it was kept.
     */
    session_started_at: integer("session_started_at"),
    rotated_at: integer("rotated_at"),
    created_at: integer("created_at").notNull().default(sql`(unixepoch())`),
  },
  (t) => [index("refresh_tokens_user_idx").on(t.user_id), index("refresh_tokens_family_idx").on(t.family_id)],
);

/** Recovery codes of a TOTP enrolment, stored as SHA-256 of the normalised code; a used code is deleted. */
export const recoveryCodes = sqliteTable(
  "recovery_codes",
  {
    user_id: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    code_hash: text("code_hash").notNull(),
    created_at: integer("created_at").notNull().default(sql`(unixepoch())`),
  },
  (t) => [primaryKey({ columns: [t.user_id, t.code_hash] })],
);

/**
 * Login challenges of TOTP accounts, by SHA-256 fingerprint of the challenge token. The login's
 * transport decides which credentials the challenge issues; `tokens_valid_after` is the account's
 * revocation epoch at login, so a revocation in between ends the challenge. `claimed_by` is set,
 * once, by the request that wins it (docs/storage.md, Two-step verification).
 */
export const mfaChallenges = sqliteTable(
  "mfa_challenges",
  {
    fingerprint: text("fingerprint").primaryKey(),
    user_id: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    transport: text("transport", { enum: ["bearer", "cookie"] }).notNull(),
    tokens_valid_after: integer("tokens_valid_after").notNull(),
    expires_at: integer("expires_at").notNull(),
    claimed_by: text("claimed_by"),
    created_at: integer("created_at").notNull().default(sql`(unixepoch())`),
  },
  (t) => [
    index("mfa_challenges_user_idx").on(t.user_id),
    check("mfa_challenges_transport_check", sql`${t.transport} IN ('bearer', 'cookie')`),
  ],
);

export const TAXONOMY_DOMAINS = ["materials", "products", "other"] as const;

/** A classification scheme (a product taxonomy, a materials taxonomy, ...): its categories form trees. */
export const taxonomies = sqliteTable(
  "taxonomies",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    /** The taxonomy's own version label, e.g. "2024" or "1.0". */
    version: text("version").notNull(),
    description: text("description"),
    /** JSON array of `TAXONOMY_DOMAINS`, at least one. */
    domains: text("domains", { mode: "json" }).notNull().$type<(typeof TAXONOMY_DOMAINS)[number][]>(),
    /** Where the taxonomy comes from: a URL or a citation. */
    source: text("source"),
    ...timestamps,
  },
  (t) => [uniqueIndex("taxonomies_name_version_unique").on(t.name, t.version)],
);

/**
 * Categories of a taxonomy, a tree through `supercategory_id`: a root has none. A subcategory
 * belongs to its supercategory's taxonomy; deleting a category deletes its subtree, and deleting
 * a taxonomy deletes its categories.
 */
export const categories = sqliteTable(
  "categories",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    description: text("description"),
    /** The category's id in the taxonomy it was taken from, when it has one. */
    external_id: text("external_id"),
    taxonomy_id: integer("taxonomy_id")
      .notNull()
      .references(() => taxonomies.id, { onDelete: "cascade" }),
    supercategory_id: integer("supercategory_id").references((): AnySQLiteColumn => categories.id, { onDelete: "cascade" }),
    ...timestamps,
  },
  (t) => [
    index("categories_taxonomy_root_idx").on(t.taxonomy_id, t.name).where(sql`${t.supercategory_id} IS NULL`),
    index("categories_supercategory_idx").on(t.supercategory_id, t.name),
    uniqueIndex("categories_taxonomy_external_unique").on(t.taxonomy_id, t.external_id),
  ],
);

/** Materials a bill of materials names, with their density and critical-raw-material flag. */
export const materials = sqliteTable(
  "materials",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    description: text("description"),
    density_kg_m3: real("density_kg_m3"),
    /** On the EU list of critical raw materials. */
    is_crm: integer("is_crm", { mode: "boolean" }).notNull().default(false),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("materials_name_unique").on(t.name),
    check("materials_density_positive", sql`${t.density_kg_m3} IS NULL OR ${t.density_kg_m3} > 0`),
  ],
);

export const materialCategories = sqliteTable(
  "material_categories",
  {
    material_id: integer("material_id")
      .notNull()
      .references(() => materials.id, { onDelete: "cascade" }),
    category_id: integer("category_id")
      .notNull()
      .references(() => categories.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.material_id, t.category_id] }), index("material_categories_category_idx").on(t.category_id)],
);

export const productTypeCategories = sqliteTable(
  "product_type_categories",
  {
    product_type_id: integer("product_type_id")
      .notNull()
      .references(() => productTypes.id, { onDelete: "cascade" }),
    category_id: integer("category_id")
      .notNull()
      .references(() => categories.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.product_type_id, t.category_id] }), index("product_type_categories_category_idx").on(t.category_id)],
);

/** One entry per material per record: how much of it the record contains. */
export const billOfMaterials = sqliteTable(
  "bill_of_materials",
  {
    product_id: integer("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    material_id: integer("material_id")
      .notNull()
      .references(() => materials.id),
    quantity: real("quantity").notNull(),
    unit: text("unit")
      .notNull()
      .references(() => units.code),
    ...timestamps,
  },
  (t) => [
    primaryKey({ columns: [t.product_id, t.material_id] }),
    index("bill_of_materials_material_idx").on(t.material_id),
    check("bill_of_materials_quantity", sql`${t.quantity} > 0 AND ${t.quantity} <= 1000000`),
  ],
);

/** Videos of base products: links to a video platform, not uploads. */
export const videos = sqliteTable(
  "videos",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    product_id: integer("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    title: text("title"),
    description: text("description"),
    video_metadata: text("video_metadata", { mode: "json" }).$type<Record<string, unknown>>(),
    ...timestamps,
  },
  (t) => [index("videos_product_idx").on(t.product_id)],
);

/**
 * State of an upload (decisions.md, Media states): `pending` in quarantine until the media job has
 * scanned (and, for images, decoded) it; then `clean` (served) or `rejected` (never served, its
 * bytes removed, its quota released; kept so that its owner sees what became of it).
 */
export const MEDIA_STATUSES = ["pending", "clean", "rejected"] as const;

/** Why an upload was rejected: the malware scan found something, the image could not be decoded, or the scan never finished. */
export const MEDIA_REJECTIONS = ["malware", "undecodable", "unscanned"] as const;

/** Columns every media table has; `kind` names the table in its constraints. */
function mediaColumns() {
  return {
    /** 32 lowercase hex characters (decisions.md: images and files have string ids), random. */
    id: text("id").primaryKey(),
    product_id: integer("product_id")
      .notNull()
      .references(() => products.id, { onDelete: "cascade" }),
    storage_key: text("storage_key").notNull(),
    filename: text("filename").notNull(),
    content_type: text("content_type").notNull(),
    size_bytes: integer("size_bytes").notNull(),
    description: text("description"),
    status: text("status", { enum: MEDIA_STATUSES }).notNull().default("pending"),
    rejected_reason: text("rejected_reason", { enum: MEDIA_REJECTIONS }),
    uploaded_by: integer("uploaded_by").references(() => users.id, { onDelete: "set null" }),
    ...timestamps,
  };
}

type MediaTable = { [K in keyof ReturnType<typeof mediaColumns>]: AnySQLiteColumn };

/**
 * Indexes and checks every media table has: listing a record's media oldest first, finding the
 * rows that share an object, finding uploads left pending (a partial index: only pending rows,
 * by when their job was last queued, which `updated_at` records while pending), and the id,
 * status and size rules.
 */
function mediaConstraints(kind: "images" | "files", t: MediaTable) {
  return [
    // Entries end with the rowid, so this index also serves MEDIA_ORDER's insertion-order tiebreak.
    index(`${kind}_product_idx`).on(t.product_id, t.created_at),
    index(`${kind}_storage_key_idx`).on(t.storage_key),
    index(`${kind}_pending_idx`).on(t.updated_at).where(sql`status = 'pending'`),
    check(`${kind}_status`, sql`${t.status} IN ('pending', 'clean', 'rejected')`),
    check(
      `${kind}_rejected_reason`,
      sql`(${t.status} = 'rejected' AND ${t.rejected_reason} IN ('malware', 'undecodable', 'unscanned')) OR (${t.status} <> 'rejected' AND ${t.rejected_reason} IS NULL)`,
    ),
    check(`${kind}_id`, sql`length(${t.id}) = 32 AND ${t.id} NOT GLOB '*[^0-9a-f]*'`),
    check(`${kind}_size`, sql`${t.size_bytes} > 0`),
  ];
}

/**
 * Images of base products and components. The bytes live in R2 under `storage_key`, a content
 * hash with the format's extension, so identical uploads share one object; served at
 * `/uploads/images/<storage_key>`. `width`/`height` are after re-orientation.
 */
export const images = sqliteTable(
  "images",
  {
    ...mediaColumns(),
    width: integer("width").notNull(),
    height: integer("height").notNull(),
    image_metadata: text("image_metadata", { mode: "json" }).$type<Record<string, unknown>>(),
    /** 1 once the thumbnails at every width are in R2. */
    thumbnails_ready: integer("thumbnails_ready", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [...mediaConstraints("images", t), check("images_dimensions", sql`${t.width} > 0 AND ${t.height} > 0`)],
);

/** Research files of base products and components, stored as submitted under a content hash; served at `/uploads/files/<storage_key>`. */
export const files = sqliteTable("files", mediaColumns(), (t) => mediaConstraints("files", t));

/**
 * Create requests sent with an `Idempotency-Key`, per user, method and path, and key, kept one
 * hour (docs/idempotency.md). A row is running (no `resource_id`, no `response_status`: the
 * atomic in-flight marker), committed (`resource_id`, written by the create's own batch) or
 * stored (`response_status` and the response to replay).
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    user_id: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** Method and path (parent id included, no query): a key is scoped to user, scope and key. */
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    /** Method, path and query string of the original request. */
    target: text("target").notNull(),
    /** SHA-256 of the original body. */
    body_hash: text("body_hash").notNull(),
    /** Random id of the request that claimed the key: its later writes are fenced on it. */
    claim: text("claim").notNull(),
    /** Id of the record the create made, written in the create's own batch (null: not committed). */
    resource_id: integer("resource_id"),
    response_status: integer("response_status"),
    response_body: text("response_body"),
    response_headers: text("response_headers", { mode: "json" }).$type<Record<string, string>>(),
    created_at: integer("created_at").notNull(),
    expires_at: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.user_id, t.scope, t.key] }), index("idempotency_keys_expires_idx").on(t.expires_at)],
);

/**
 * Blocks of ids handed out ahead of an insert: a create with nested components reserves all its
 * ids in one statement, so every row (children naming their parents) goes into one batch.
 */
export const idBlocks = sqliteTable("id_blocks", {
  name: text("name").primaryKey(),
  next_id: integer("next_id").notNull(),
});

/**
 * Validators of the cached public reads (docs/storage.md "Cached reads"): a generation per base
 * product, given a fresh random value by triggers (migration 0020) in the transaction of every write to the product's
 * tree, its bills of materials, media and videos, or its owner's name or visibility.
 */
export const treeGenerations = sqliteTable("tree_generations", {
  root_id: integer("root_id").primaryKey(),
  generation: integer("generation").notNull(),
});

/**
 * Generations of what many reads show (`catalogue`: every write a list, facet or suggestion can
 * show; `reference`: material and product-type names), renewed by the same triggers.
 */
export const readGenerations = sqliteTable("read_generations", {
  name: text("name").primaryKey(),
  generation: integer("generation").notNull(),
});

/*
 * Counters kept up to date by triggers in the transaction of every write (migration 0024;
 * docs/storage.md "Counters"), so that totals, facets, suggestions and statistics read a few rows
 * instead of counting the catalogue per request. A row whose counts all drop to 0 is deleted.
 */

/** Totals over the catalogue: `base_products` (count, and the sum of their weights in `mass_g`), `components`, `clean_images`, `active_users`. */
export const catalogueTotals = sqliteTable("catalogue_totals", {
  name: text("name").primaryKey(),
  count: integer("count").notNull().default(0),
  mass_g: real("mass_g").notNull().default(0),
});

/** Per brand: base products carrying it (facets, `brand[in]` totals) and records of any kind (suggestions). */
export const brandCounts = sqliteTable(
  "brand_counts",
  {
    brand: text("brand").primaryKey(),
    base_products: integer("base_products").notNull(),
    records: integer("records").notNull(),
  },
  (t) => [
    index("brand_counts_base_idx").on(sql`${t.base_products} DESC`, t.brand),
    index("brand_counts_records_idx").on(sql`${t.records} DESC`, t.brand),
    index("brand_counts_prefix1_idx").on(sql`lower(substr(${t.brand}, 1, 1))`, sql`${t.records} DESC`, t.brand),
    index("brand_counts_prefix2_idx").on(sql`lower(substr(${t.brand}, 1, 2))`, sql`${t.records} DESC`, t.brand),
  ],
);

/** Per model (case kept, as the facets and suggestions group them): the same two counts as `brand_counts`. */
export const modelCounts = sqliteTable(
  "model_counts",
  {
    model: text("model").primaryKey(),
    base_products: integer("base_products").notNull(),
    records: integer("records").notNull(),
  },
  (t) => [
    index("model_counts_base_idx").on(sql`${t.base_products} DESC`, t.model),
    index("model_counts_records_idx").on(sql`${t.records} DESC`, t.model),
    index("model_counts_prefix1_idx").on(sql`lower(substr(${t.model}, 1, 1))`, sql`${t.records} DESC`, t.model),
    index("model_counts_prefix2_idx").on(sql`lower(substr(${t.model}, 1, 2))`, sql`${t.records} DESC`, t.model),
  ],
);

/** Per kind (`brands`, `models`) and first one or two characters (lower-cased as `lower()` does): how many distinct values start so (suggestion totals). */
export const prefixCounts = sqliteTable(
  "prefix_counts",
  {
    kind: text("kind").notNull(),
    prefix: text("prefix").notNull(),
    value_count: integer("value_count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.prefix] })],
);

/** Per product type: base products and components of that type (type facet, `product_type_name[in]` totals, statistics by category). */
export const productTypeCounts = sqliteTable("product_type_counts", {
  product_type_id: integer("product_type_id").primaryKey(),
  base_products: integer("base_products").notNull(),
  components: integer("components").notNull(),
});

/** Per owner: base products (`owner=me` and a user's list totals). */
export const ownerCounts = sqliteTable("owner_counts", {
  owner_id: integer("owner_id").primaryKey(),
  base_products: integer("base_products").notNull(),
});

/** Per UTC day (`created_at / 86400`): what the statistics series sums per period. */
export const dailyCounts = sqliteTable("daily_counts", {
  day: integer("day").primaryKey(),
  teardowns: integer("teardowns").notNull().default(0),
  parts: integer("parts").notNull().default(0),
  mass_g: real("mass_g").notNull().default(0),
  images: integer("images").notNull().default(0),
  users_new: integer("users_new").notNull().default(0),
});

/** The identity providers and the video-platform association an account can link. */
export const OAUTH_PROVIDERS = ["google", "github", "google-youtube"] as const;

/**
 * Linked sign-ins (and the video-platform association): one row per account and provider.
 * Provider tokens are kept sealed (AES-256-GCM under DATA_ENCRYPTION_KEY, context
 * `oauth:<provider>:<account_id>`), because revoking the grant on account deletion, and using the
 * video platform, need them back. Gone with the account (ON DELETE CASCADE).
 */
export const oauthAccounts = sqliteTable(
  "oauth_accounts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    user_id: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    provider: text("provider", { enum: OAUTH_PROVIDERS }).notNull(),
    /** The provider's stable id of the account (`sub` for Google, the numeric id for GitHub). */
    account_id: text("account_id").notNull(),
    account_email: text("account_email"),
    access_token_sealed: text("access_token_sealed"),
    refresh_token_sealed: text("refresh_token_sealed"),
    /** Unix seconds when the access token expires; null when the provider does not say. */
    access_token_expires_at: integer("access_token_expires_at"),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("oauth_accounts_provider_account").on(t.provider, t.account_id),
    uniqueIndex("oauth_accounts_user_provider").on(t.user_id, t.provider),
    check("oauth_accounts_provider_check", sql`${t.provider} IN ('google', 'github', 'google-youtube')`),
  ],
);

/**
 * One-time hand-offs from an OAuth callback to the app (2 minutes): `mfa` holds the sealed MFA
 * challenge token the claim returns; `login` names the account whose bearer session the claim
 * starts. Stored as the SHA-256 of the hand-off; deleted when claimed.
 */
export const oauthHandoffs = sqliteTable("oauth_handoffs", {
  fingerprint: text("fingerprint").primaryKey(),
  kind: text("kind", { enum: ["mfa", "login"] }).notNull(),
  user_id: integer("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  /** The MFA challenge token, sealed (context `oauth-handoff`); null for `login`. */
  secret_sealed: text("secret_sealed"),
  /** The account's revocation epoch at the callback: a revocation since voids the hand-off. */
  tokens_valid_after: integer("tokens_valid_after").notNull(),
  /**
   * The app's PKCE challenge (S256) from the token flow's authorize: the claim must present its
   * verifier, so a hand-off planted on another device cannot be claimed there. Null for browser flows.
   */
  app_challenge: text("app_challenge"),
  expires_at: integer("expires_at").notNull(),
});

/** Nonces of OAuth state tokens already used at a callback: each state works once. */
export const oauthStateUses = sqliteTable("oauth_state_uses", {
  nonce: text("nonce").primaryKey(),
  expires_at: integer("expires_at").notNull(),
});

/** States of a dataset release (decisions.md, Dataset releases): `building` ends `published` or `failed`. */
export const RELEASE_STATUSES = ["building", "published", "failed"] as const;

/** States of a release's DOI registration (decisions.md, "Publishing releases"). */
export const DOI_STATUSES = ["disabled", "pending", "registered", "failed"] as const;

/**
 * Dataset releases: immutable, citable snapshots of the dataset, whose files live in R2 under
 * `releases/<version>/` (docs/releases.md). A published row never changes again: triggers of
 * migration 0019 refuse any UPDATE or DELETE of it (and of its files' rows).
 */
export const releases = sqliteTable(
  "releases",
  {
    /** `^[0-9][0-9A-Za-z.-]{0,31}$`, chosen by the superuser; part of every file's key. */
    version: text("version").primaryKey(),
    title: text("title").notNull(),
    description: text("description"),
    /** SPDX id of the licence (src/lib/release/licences.ts). */
    licence: text("licence").notNull(),
    status: text("status", { enum: RELEASE_STATUSES }).notNull().default("building"),
    /** The API's origin as the release was requested: the base of the URLs its files name. */
    base_url: text("base_url").notNull(),
    /** Random id of the current build attempt; a retry draws a new one, fencing off the old attempt's messages. */
    build_id: text("build_id").notNull(),
    /** Unix seconds of the snapshot batch; null until it ran. */
    snapshot_at: integer("snapshot_at"),
    /** Counts of the snapshot; null until it ran. */
    records: integer("records"),
    base_products: integer("base_products"),
    images: integer("images"),
    record_materials: integer("record_materials"),
    /** Rows of `records` written to its files so far: the progress a building release shows. */
    records_written: integer("records_written").notNull().default(0),
    /** The build's checkpoint (JSON): the step it is at and the writers' and uploads' states. */
    build_state: text("build_state"),
    /** The invocation working on the build and until when (Unix seconds of D1's clock). */
    lease_id: text("lease_id"),
    lease_until: integer("lease_until"),
    /** Failed attempts in a row of the current build; reset by progress. */
    build_failures: integer("build_failures").notNull().default(0),
    /** Why the build failed (superusers only). */
    failure_reason: text("failure_reason"),
    published_at: integer("published_at"),
    /** Who publishes the release and who its creator is (`RELEASE_PUBLISHER`, `RELEASE_CREATOR`, `RELEASE_CREATOR_ROR` when it was requested). */
    publisher: text("publisher").notNull().default("relab"),
    /** Null: the publisher. */
    creator: text("creator"),
    creator_ror: text("creator_ror"),
    /** The names of the product types of the release's records (JSON array), stamped by the snapshot: its subjects. */
    subjects: text("subjects"),
    /** Its image files and their bytes, stamped at publication (null for releases published before migration 0021). */
    image_files: integer("image_files"),
    image_bytes: integer("image_bytes"),
    /**
     * The DOI registration (src/services/releases/doi.ts), which runs after publication and is the
     * only thing that may still change on a published row (migration 0021's trigger). Its values
     * are checked by a CHECK on the column that migration 0021 adds by hand (drizzle-kit would
     * rebuild the table for a table-level one).
     */
    doi_status: text("doi_status", { enum: DOI_STATUSES }).notNull().default("disabled"),
    /** The version DOI once registered, and the concept DOI (all versions) once created or updated. */
    doi: text("doi"),
    concept_doi: text("concept_doi"),
    /** Why the last attempt failed (superusers only). */
    doi_error: text("doi_error"),
    /** Attempts of the current registration so far. */
    doi_attempts: integer("doi_attempts").notNull().default(0),
    /** While an attempt runs: until when it holds the registration (Unix seconds of D1's clock). */
    doi_lease_until: integer("doi_lease_until"),
    /** When the registration last moved (Unix seconds). */
    doi_updated_at: integer("doi_updated_at"),
    ...timestamps,
  },
  (t) => [
    index("releases_created_idx").on(t.created_at, t.version),
    index("releases_published_idx").on(t.published_at, t.version),
    check("releases_status", sql`${t.status} IN ('building', 'published', 'failed')`),
    check(
      "releases_version",
      sql`length(${t.version}) BETWEEN 1 AND 32 AND ${t.version} GLOB '[0-9]*' AND ${t.version} NOT GLOB '*[^0-9A-Za-z.-]*'`,
    ),
    check(
      "releases_state_fields",
      sql`(${t.status} = 'published') = (${t.published_at} IS NOT NULL AND ${t.snapshot_at} IS NOT NULL) AND (${t.status} = 'failed') = (${t.failure_reason} IS NOT NULL)`,
    ),
  ],
);

/**
 * The contributors a release credits (decisions.md, "Publishing releases"): accounts that opted in
 * to release credit, whose records the snapshot holds, as they were at the snapshot. Written by the
 * snapshot batch; a published release's rows never change (migration 0021's triggers).
 */
export const releaseCredits = sqliteTable(
  "release_credits",
  {
    release_version: text("release_version")
      .notNull()
      .references(() => releases.version, { onDelete: "cascade" }),
    /** Order of appearance: by username. */
    position: integer("position").notNull(),
    username: text("username").notNull(),
    orcid: text("orcid"),
  },
  (t) => [primaryKey({ columns: [t.release_version, t.position] })],
);

/** Every file of a release (its tables, metadata files and copied images): what is served and listed. */
export const releaseFiles = sqliteTable(
  "release_files",
  {
    release_version: text("release_version")
      .notNull()
      .references(() => releases.version, { onDelete: "cascade" }),
    /** Relative to `releases/<version>/`, e.g. `records.csv`, `reference/units.parquet`, `images/<sha256>.jpg`. */
    path: text("path").notNull(),
    bytes: integer("bytes").notNull(),
    /** Lower-case hex SHA-256 of the file. */
    sha256: text("sha256").notNull(),
    media_type: text("media_type").notNull(),
  },
  (t) => [primaryKey({ columns: [t.release_version, t.path] })],
);

/**
 * Staging tables: the snapshot batch copies the release's selection into them at one instant, and
 * the build writes the files from them, so nothing that changes on the live tables meanwhile
 * reaches a release. Emptied when the release is published or fails.
 */
export const releaseRecords = sqliteTable(
  "release_records",
  {
    release_version: text("release_version")
      .notNull()
      .references(() => releases.version, { onDelete: "cascade" }),
    id: integer("id").notNull(),
    parent_id: integer("parent_id"),
    amount_in_parent: integer("amount_in_parent"),
    /** The base product's owner at the snapshot (no foreign key: the account may go meanwhile). */
    owner_id: integer("owner_id").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    brand: text("brand"),
    model: text("model"),
    product_type_id: integer("product_type_id"),
    weight_g: real("weight_g"),
    height_cm: real("height_cm"),
    width_cm: real("width_cm"),
    depth_cm: real("depth_cm"),
    volume_cm3: real("volume_cm3"),
    circularity_properties: text("circularity_properties"),
    created_at: integer("created_at").notNull(),
    updated_at: integer("updated_at").notNull(),
    /** The record's quality at the snapshot (`products.quality_score` and its checks: 1 pass, 0 fail, null not applicable). */
    quality_score: real("quality_score"),
    check_has_product_type: integer("check_has_product_type"),
    check_has_weight: integer("check_has_weight"),
    check_has_dimensions: integer("check_has_dimensions"),
    check_has_image: integer("check_has_image"),
    check_has_breakdown: integer("check_has_breakdown"),
    check_components_mass_balance: integer("check_components_mass_balance"),
    check_materials_mass_balance: integer("check_materials_mass_balance"),
    check_density_plausible: integer("check_density_plausible"),
    check_has_circularity_notes: integer("check_has_circularity_notes"),
  },
  (t) => [primaryKey({ columns: [t.release_version, t.id] })],
);

export const releaseRecordMaterials = sqliteTable(
  "release_record_materials",
  {
    release_version: text("release_version")
      .notNull()
      .references(() => releases.version, { onDelete: "cascade" }),
    record_id: integer("record_id").notNull(),
    material_id: integer("material_id").notNull(),
    quantity: real("quantity").notNull(),
    unit: text("unit").notNull(),
  },
  (t) => [primaryKey({ columns: [t.release_version, t.record_id, t.material_id] })],
);

export const releaseImages = sqliteTable(
  "release_images",
  {
    release_version: text("release_version")
      .notNull()
      .references(() => releases.version, { onDelete: "cascade" }),
    /** `images/<storage_key>`: the copy's path inside the release. */
    file: text("file").notNull(),
    record_id: integer("record_id").notNull(),
    /** The live object's key under `images/`, which the copy is read from. */
    storage_key: text("storage_key").notNull(),
    width: integer("width").notNull(),
    height: integer("height").notNull(),
    bytes: integer("bytes").notNull(),
    content_type: text("content_type").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.release_version, t.file, t.record_id] }),
    // The snapshot counts a slice's images by their records.
    index("release_images_record_idx").on(t.release_version, t.record_id),
  ],
);

/** The reference tables at the snapshot, one JSON object per row, in `position` order per table. */
export const releaseReferenceRows = sqliteTable(
  "release_reference_rows",
  {
    release_version: text("release_version")
      .notNull()
      .references(() => releases.version, { onDelete: "cascade" }),
    table_name: text("table_name").notNull(),
    position: integer("position").notNull(),
    row: text("row").notNull(),
  },
  (t) => [primaryKey({ columns: [t.release_version, t.table_name, t.position] })],
);

export const BACKUP_STATUSES = ["running", "complete", "failed"] as const;

/**
 * The logical backups of the database to R2 (src/services/operations/backup.ts, docs/operations.md): one row
 * per run, which the queue's slices move on with the lease and checkpoint of a release build.
 * The backups leave this table out (a run would otherwise copy itself half-written).
 */
export const backupRuns = sqliteTable(
  "backup_runs",
  {
    /** The scheduled time in ISO basic form (`20260501T031700Z`): the run's folder `backups/<id>/`. */
    id: text("id").primaryKey(),
    status: text("status", { enum: BACKUP_STATUSES }).notNull().default("running"),
    /** Unix seconds. */
    started_at: integer("started_at").notNull(),
    finished_at: integer("finished_at"),
    /** The checkpoint (JSON): the plan (schema and tables), the table being written and its upload. */
    state: text("state"),
    /** The invocation working on the run and until when (Unix seconds of D1's clock). */
    lease_id: text("lease_id"),
    lease_until: integer("lease_until"),
    /** Failed attempts in a row; reset by progress. */
    failures: integer("failures").notNull().default(0),
    failure_reason: text("failure_reason"),
    /** Totals of a complete run: tables, rows and compressed bytes written. */
    tables: integer("tables"),
    rows: integer("rows"),
    bytes: integer("bytes"),
  },
  (t) => [
    index("backup_runs_started_idx").on(t.started_at),
    check("backup_runs_status", sql`${t.status} IN ('running', 'complete', 'failed')`),
  ],
);
/** What a deletion job removes: a record with everything under it, or an account (docs/storage.md, "Deletion jobs"). */
export const DELETION_KINDS = ["record", "account"] as const;

/**
 * Deletions too large for one batch, done by the deletion queue in bounded slices
 * (src/services/products/deletion-jobs.ts). The row exists from the request that asked for the
 * deletion until the slice that finishes it; `records_done` and `slices` are its progress.
 */
export const deletionJobs = sqliteTable(
  "deletion_jobs",
  {
    id: text("id").primaryKey(),
    kind: text("kind", { enum: DELETION_KINDS }).notNull(),
    /** `record`: the record deleted with its subtree (hidden since the request, see `hidden_records`). */
    record_id: integer("record_id"),
    /** `record`: the record's owner at the request; `account`: the account (kept, anonymous and unusable, until the last slice). */
    user_id: integer("user_id").notNull(),
    /** `account`: what happens to its products. */
    content: text("content", { enum: ["anonymize", "delete"] }),
    /** `account`: the superuser who deleted it (null: self-deletion). */
    actor_id: integer("actor_id"),
    records_done: integer("records_done").notNull().default(0),
    slices: integer("slices").notNull().default(0),
    ...timestamps,
  },
  (t) => [
    check("deletion_jobs_kind", sql`${t.kind} IN ('record', 'account')`),
    check(
      "deletion_jobs_shape",
      sql`(${t.kind} = 'record' AND ${t.record_id} IS NOT NULL AND ${t.content} IS NULL) OR (${t.kind} = 'account' AND ${t.record_id} IS NULL AND ${t.content} IN ('anonymize', 'delete'))`,
    ),
  ],
);

/**
 * Records whose deletion has been asked for and not finished: each one detached from its parent
 * (its `parent_id` points at itself), and with everything under it invisible to every read
 * (`visibleRecord`, src/services/products/records.ts). Gone with its job.
 */
export const hiddenRecords = sqliteTable(
  "hidden_records",
  {
    record_id: integer("record_id").primaryKey(),
    /** The tree the record was in (its base product's id; its own for a base product). */
    root_id: integer("root_id").notNull(),
    job_id: text("job_id")
      .notNull()
      .references(() => deletionJobs.id, { onDelete: "cascade" }),
  },
  (t) => [index("hidden_records_root_idx").on(t.root_id), index("hidden_records_job_idx").on(t.job_id)],
);

/**
 * A release's snapshot while it is being copied in slices (docs/releases.md, "The snapshot"): the
 * instant it stands for (`taken_at`), the newest record then (`max_id`; later records are not in
 * it), and how far the copy has come (`cursor`: every base product with a smaller or equal id is
 * staged). While a row exists, triggers keep the first earlier version of every row a write
 * changes that the copy has not reached yet, in the pre-image tables below.
 */
export const releaseSnapshotProgress = sqliteTable("release_snapshot_progress", {
  release_version: text("release_version")
    .primaryKey()
    .references(() => releases.version, { onDelete: "cascade" }),
  build_id: text("build_id").notNull(),
  taken_at: integer("taken_at").notNull(),
  max_id: integer("max_id").notNull(),
  cursor: integer("cursor").notNull().default(0),
  /** What the copy has staged so far: the release's counts once it is done. */
  records: integer("records").notNull().default(0),
  base_products: integer("base_products").notNull().default(0),
  images: integer("images").notNull().default(0),
  record_materials: integer("record_materials").notNull().default(0),
});

/** The accounts whose base products a release holds: those that had accepted the contributor terms at its snapshot. */
export const releaseOwners = sqliteTable(
  "release_owners",
  {
    release_version: text("release_version")
      .notNull()
      .references(() => releases.version, { onDelete: "cascade" }),
    user_id: integer("user_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.release_version, t.user_id] })],
);

/** Records as they were at a snapshot, kept by a trigger before a write changed or deleted them. */
export const releaseProductPreimages = sqliteTable(
  "release_product_preimages",
  {
    release_version: text("release_version")
      .notNull()
      .references(() => releases.version, { onDelete: "cascade" }),
    id: integer("id").notNull(),
    parent_id: integer("parent_id"),
    root_id: integer("root_id").notNull(),
    owner_id: integer("owner_id").notNull(),
    amount_in_parent: integer("amount_in_parent"),
    name: text("name").notNull(),
    description: text("description"),
    brand: text("brand"),
    model: text("model"),
    product_type_id: integer("product_type_id"),
    weight_g: real("weight_g"),
    height_cm: real("height_cm"),
    width_cm: real("width_cm"),
    depth_cm: real("depth_cm"),
    circularity_properties: text("circularity_properties"),
    created_at: integer("created_at").notNull(),
    updated_at: integer("updated_at").notNull(),
    /** Its quality as it stood (virtual columns of `products`, kept as values here). */
    quality_score: real("quality_score"),
    check_has_product_type: integer("check_has_product_type"),
    check_has_weight: integer("check_has_weight"),
    check_has_dimensions: integer("check_has_dimensions"),
    check_has_image: integer("check_has_image"),
    check_has_breakdown: integer("check_has_breakdown"),
    check_components_mass_balance: integer("check_components_mass_balance"),
    check_materials_mass_balance: integer("check_materials_mass_balance"),
    check_density_plausible: integer("check_density_plausible"),
    check_has_circularity_notes: integer("check_has_circularity_notes"),
  },
  (t) => [primaryKey({ columns: [t.release_version, t.id] }), index("release_product_preimages_root_idx").on(t.release_version, t.root_id)],
);

/** Bill-of-materials rows as they were at a snapshot; `existed` 0: the row was added after it. */
export const releaseBomPreimages = sqliteTable(
  "release_bom_preimages",
  {
    release_version: text("release_version")
      .notNull()
      .references(() => releases.version, { onDelete: "cascade" }),
    product_id: integer("product_id").notNull(),
    material_id: integer("material_id").notNull(),
    root_id: integer("root_id").notNull(),
    quantity: real("quantity"),
    unit: text("unit"),
    existed: integer("existed").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.release_version, t.product_id, t.material_id] }),
    index("release_bom_preimages_root_idx").on(t.release_version, t.root_id),
  ],
);

/** Image rows as they were at a snapshot; `existed` 0: the row was added after it. */
export const releaseImagePreimages = sqliteTable(
  "release_image_preimages",
  {
    release_version: text("release_version")
      .notNull()
      .references(() => releases.version, { onDelete: "cascade" }),
    id: text("id").notNull(),
    product_id: integer("product_id").notNull(),
    root_id: integer("root_id").notNull(),
    storage_key: text("storage_key"),
    width: integer("width"),
    height: integer("height"),
    size_bytes: integer("size_bytes"),
    content_type: text("content_type"),
    status: text("status"),
    existed: integer("existed").notNull(),
  },
  (t) => [primaryKey({ columns: [t.release_version, t.id] }), index("release_image_preimages_root_idx").on(t.release_version, t.root_id)],
);
