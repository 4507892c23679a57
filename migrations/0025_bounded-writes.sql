CREATE TABLE `deletion_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`record_id` integer,
	`user_id` integer NOT NULL,
	`content` text,
	`actor_id` integer,
	`records_done` integer DEFAULT 0 NOT NULL,
	`slices` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	CONSTRAINT "deletion_jobs_kind" CHECK("deletion_jobs"."kind" IN ('record', 'account')),
	CONSTRAINT "deletion_jobs_shape" CHECK(("deletion_jobs"."kind" = 'record' AND "deletion_jobs"."record_id" IS NOT NULL AND "deletion_jobs"."content" IS NULL) OR ("deletion_jobs"."kind" = 'account' AND "deletion_jobs"."record_id" IS NULL AND "deletion_jobs"."content" IN ('anonymize', 'delete')))
);
--> statement-breakpoint
CREATE TABLE `hidden_records` (
	`record_id` integer PRIMARY KEY NOT NULL,
	`root_id` integer NOT NULL,
	`job_id` text NOT NULL,
	FOREIGN KEY (`job_id`) REFERENCES `deletion_jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `hidden_records_root_idx` ON `hidden_records` (`root_id`);--> statement-breakpoint
CREATE INDEX `hidden_records_job_idx` ON `hidden_records` (`job_id`);--> statement-breakpoint
CREATE TABLE `release_bom_preimages` (
	`release_version` text NOT NULL,
	`product_id` integer NOT NULL,
	`material_id` integer NOT NULL,
	`root_id` integer NOT NULL,
	`quantity` real,
	`unit` text,
	`existed` integer NOT NULL,
	PRIMARY KEY(`release_version`, `product_id`, `material_id`),
	FOREIGN KEY (`release_version`) REFERENCES `releases`(`version`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `release_bom_preimages_root_idx` ON `release_bom_preimages` (`release_version`,`root_id`);--> statement-breakpoint
CREATE TABLE `release_image_preimages` (
	`release_version` text NOT NULL,
	`id` text NOT NULL,
	`product_id` integer NOT NULL,
	`root_id` integer NOT NULL,
	`storage_key` text,
	`width` integer,
	`height` integer,
	`size_bytes` integer,
	`content_type` text,
	`status` text,
	`existed` integer NOT NULL,
	PRIMARY KEY(`release_version`, `id`),
	FOREIGN KEY (`release_version`) REFERENCES `releases`(`version`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `release_image_preimages_root_idx` ON `release_image_preimages` (`release_version`,`root_id`);--> statement-breakpoint
CREATE TABLE `release_owners` (
	`release_version` text NOT NULL,
	`user_id` integer NOT NULL,
	PRIMARY KEY(`release_version`, `user_id`),
	FOREIGN KEY (`release_version`) REFERENCES `releases`(`version`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `release_product_preimages` (
	`release_version` text NOT NULL,
	`id` integer NOT NULL,
	`parent_id` integer,
	`root_id` integer NOT NULL,
	`owner_id` integer NOT NULL,
	`amount_in_parent` integer,
	`name` text NOT NULL,
	`description` text,
	`brand` text,
	`model` text,
	`product_type_id` integer,
	`weight_g` real,
	`height_cm` real,
	`width_cm` real,
	`depth_cm` real,
	`circularity_properties` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`quality_score` real,
	`check_has_product_type` integer,
	`check_has_weight` integer,
	`check_has_dimensions` integer,
	`check_has_image` integer,
	`check_has_breakdown` integer,
	`check_components_mass_balance` integer,
	`check_materials_mass_balance` integer,
	`check_density_plausible` integer,
	`check_has_circularity_notes` integer,
	PRIMARY KEY(`release_version`, `id`),
	FOREIGN KEY (`release_version`) REFERENCES `releases`(`version`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `release_product_preimages_root_idx` ON `release_product_preimages` (`release_version`,`root_id`);--> statement-breakpoint
CREATE TABLE `release_snapshot_progress` (
	`release_version` text PRIMARY KEY NOT NULL,
	`build_id` text NOT NULL,
	`taken_at` integer NOT NULL,
	`max_id` integer NOT NULL,
	`cursor` integer DEFAULT 0 NOT NULL,
	`records` integer DEFAULT 0 NOT NULL,
	`base_products` integer DEFAULT 0 NOT NULL,
	`images` integer DEFAULT 0 NOT NULL,
	`record_materials` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`release_version`) REFERENCES `releases`(`version`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `release_images_record_idx` ON `release_images` (`release_version`,`record_id`);--> statement-breakpoint
-- Hand-written (drizzle-kit has no notation for triggers): while a release's snapshot is being
-- copied (a `release_snapshot_progress` row), the first write after the snapshot's instant to a
-- record the copy has not reached yet (its base product's id above `cursor`, its own id at most
-- `max_id`) keeps the record's earlier version, and the same for its bill-of-materials and image
-- rows; a row added since is kept as `existed = 0`. The copy takes those versions instead of the
-- live rows, so the release holds the dataset as it was at one instant however long the copy
-- takes (docs/releases.md, "The snapshot"). BEFORE, so that a record's version is kept before
-- ON DELETE CASCADE removes its rows below it. With no snapshot running, each trigger costs one
-- look into an empty table.
CREATE TRIGGER `products_release_kept_on_update` BEFORE UPDATE ON `products`
WHEN EXISTS (SELECT 1 FROM release_snapshot_progress s WHERE old.id <= s.max_id AND old.root_id > s.cursor) BEGIN
  INSERT OR IGNORE INTO release_product_preimages (release_version, id, parent_id, root_id, owner_id, amount_in_parent, name, description,
    brand, model, product_type_id, weight_g, height_cm, width_cm, depth_cm, circularity_properties, created_at, updated_at,
    quality_score, check_has_product_type, check_has_weight, check_has_dimensions, check_has_image, check_has_breakdown, check_components_mass_balance, check_materials_mass_balance, check_density_plausible, check_has_circularity_notes)
  SELECT s.release_version, old.id, old.parent_id, old.root_id, old.owner_id, old.amount_in_parent, old.name, old.description,
    old.brand, old.model, old.product_type_id, old.weight_g, old.height_cm, old.width_cm, old.depth_cm, old.circularity_properties,
    old.created_at, old.updated_at, old.quality_score, old.check_has_product_type, old.check_has_weight, old.check_has_dimensions, old.check_has_image, old.check_has_breakdown, old.check_components_mass_balance, old.check_materials_mass_balance, old.check_density_plausible, old.check_has_circularity_notes
  FROM release_snapshot_progress s WHERE old.id <= s.max_id AND old.root_id > s.cursor;
END;--> statement-breakpoint
CREATE TRIGGER `products_release_kept_on_delete` BEFORE DELETE ON `products`
WHEN EXISTS (SELECT 1 FROM release_snapshot_progress s WHERE old.id <= s.max_id AND old.root_id > s.cursor) BEGIN
  INSERT OR IGNORE INTO release_product_preimages (release_version, id, parent_id, root_id, owner_id, amount_in_parent, name, description,
    brand, model, product_type_id, weight_g, height_cm, width_cm, depth_cm, circularity_properties, created_at, updated_at,
    quality_score, check_has_product_type, check_has_weight, check_has_dimensions, check_has_image, check_has_breakdown, check_components_mass_balance, check_materials_mass_balance, check_density_plausible, check_has_circularity_notes)
  SELECT s.release_version, old.id, old.parent_id, old.root_id, old.owner_id, old.amount_in_parent, old.name, old.description,
    old.brand, old.model, old.product_type_id, old.weight_g, old.height_cm, old.width_cm, old.depth_cm, old.circularity_properties,
    old.created_at, old.updated_at, old.quality_score, old.check_has_product_type, old.check_has_weight, old.check_has_dimensions, old.check_has_image, old.check_has_breakdown, old.check_components_mass_balance, old.check_materials_mass_balance, old.check_density_plausible, old.check_has_circularity_notes
  FROM release_snapshot_progress s WHERE old.id <= s.max_id AND old.root_id > s.cursor;
END;--> statement-breakpoint
-- A row's tree: its record's, or (the record deleted in the same statement, by cascade) the kept version's.
CREATE TRIGGER `bill_of_materials_release_kept_on_insert` BEFORE INSERT ON `bill_of_materials`
WHEN EXISTS (SELECT 1 FROM release_snapshot_progress s) BEGIN
  INSERT OR IGNORE INTO release_bom_preimages (release_version, product_id, material_id, root_id, quantity, unit, existed)
  SELECT s.release_version, new.product_id, new.material_id, p.root_id, NULL, NULL, 0
  FROM release_snapshot_progress s JOIN products p ON p.id = new.product_id WHERE p.id <= s.max_id AND p.root_id > s.cursor;
END;--> statement-breakpoint
CREATE TRIGGER `bill_of_materials_release_kept_on_update` BEFORE UPDATE ON `bill_of_materials`
WHEN EXISTS (SELECT 1 FROM release_snapshot_progress s) BEGIN
  INSERT OR IGNORE INTO release_bom_preimages (release_version, product_id, material_id, root_id, quantity, unit, existed)
  SELECT s.release_version, old.product_id, old.material_id, p.root_id, old.quantity, old.unit, 1
  FROM release_snapshot_progress s JOIN products p ON p.id = old.product_id WHERE p.id <= s.max_id AND p.root_id > s.cursor;
END;--> statement-breakpoint
CREATE TRIGGER `bill_of_materials_release_kept_on_delete` BEFORE DELETE ON `bill_of_materials`
WHEN EXISTS (SELECT 1 FROM release_snapshot_progress s) BEGIN
  INSERT OR IGNORE INTO release_bom_preimages (release_version, product_id, material_id, root_id, quantity, unit, existed)
  SELECT s.release_version, old.product_id, old.material_id, k.root_id, old.quantity, old.unit, 1
  FROM release_snapshot_progress s
  JOIN (SELECT root_id FROM products WHERE id = old.product_id
        UNION ALL SELECT root_id FROM release_product_preimages WHERE id = old.product_id AND NOT EXISTS (SELECT 1 FROM products WHERE id = old.product_id)) k
  WHERE old.product_id <= s.max_id AND k.root_id > s.cursor;
END;--> statement-breakpoint
CREATE TRIGGER `images_release_kept_on_insert` BEFORE INSERT ON `images`
WHEN EXISTS (SELECT 1 FROM release_snapshot_progress s) BEGIN
  INSERT OR IGNORE INTO release_image_preimages (release_version, id, product_id, root_id, existed)
  SELECT s.release_version, new.id, new.product_id, p.root_id, 0
  FROM release_snapshot_progress s JOIN products p ON p.id = new.product_id WHERE p.id <= s.max_id AND p.root_id > s.cursor;
END;--> statement-breakpoint
CREATE TRIGGER `images_release_kept_on_update` BEFORE UPDATE ON `images`
WHEN EXISTS (SELECT 1 FROM release_snapshot_progress s) BEGIN
  INSERT OR IGNORE INTO release_image_preimages (release_version, id, product_id, root_id, storage_key, width, height, size_bytes, content_type, status, existed)
  SELECT s.release_version, old.id, old.product_id, p.root_id, old.storage_key, old.width, old.height, old.size_bytes, old.content_type, old.status, 1
  FROM release_snapshot_progress s JOIN products p ON p.id = old.product_id WHERE p.id <= s.max_id AND p.root_id > s.cursor;
END;--> statement-breakpoint
CREATE TRIGGER `images_release_kept_on_delete` BEFORE DELETE ON `images`
WHEN EXISTS (SELECT 1 FROM release_snapshot_progress s) BEGIN
  INSERT OR IGNORE INTO release_image_preimages (release_version, id, product_id, root_id, storage_key, width, height, size_bytes, content_type, status, existed)
  SELECT s.release_version, old.id, old.product_id, k.root_id, old.storage_key, old.width, old.height, old.size_bytes, old.content_type, old.status, 1
  FROM release_snapshot_progress s
  JOIN (SELECT root_id FROM products WHERE id = old.product_id
        UNION ALL SELECT root_id FROM release_product_preimages WHERE id = old.product_id AND NOT EXISTS (SELECT 1 FROM products WHERE id = old.product_id)) k
  WHERE old.product_id <= s.max_id AND k.root_id > s.cursor;
END;
--> statement-breakpoint
-- Migration 0020's trigger renewed a tree's generation once per record of the owner, not once per
-- tree: `SELECT DISTINCT root_id, random()` is distinct on the pair, and random() makes every row
-- so (a rename of an account with 5,000 products wrote 74,000 rows instead of 5,000). The same
-- trigger, distinct on the tree first.
DROP TRIGGER `users_read_updated`;--> statement-breakpoint
CREATE TRIGGER `users_read_updated` AFTER UPDATE OF username, profile_visibility ON `users` BEGIN
  INSERT INTO tree_generations (root_id, generation)
    SELECT root_id, random() FROM (SELECT DISTINCT root_id FROM products WHERE owner_id = new.id AND root_id IS NOT NULL) WHERE true
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;
--> statement-breakpoint
-- What a deletion renews (migration 0020's triggers, refined): a record's generations once per
-- deletion, not once per row it takes along. A row deleted by ON DELETE CASCADE (its parent, or
-- its record, already gone in the same statement) renews nothing: the row that started the
-- cascade renewed its tree and the catalogue. Nor does a row of a base product being deleted in
-- slices (docs/storage.md, "Deletion jobs"): hiding it renewed them, and nothing a read can see
-- changes as its rows go. Deleting 1,000 records with 2,000 bill-of-materials entries wrote some
-- 12,000 generation rows before; now one or two.
DROP TRIGGER `products_read_deleted`;--> statement-breakpoint
CREATE TRIGGER `products_read_deleted` AFTER DELETE ON `products`
WHEN (old.parent_id IS NULL OR EXISTS (SELECT 1 FROM products WHERE id = old.parent_id))
  AND NOT EXISTS (SELECT 1 FROM hidden_records WHERE record_id = old.root_id) BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT old.root_id, random() WHERE old.root_id IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
DROP TRIGGER `bill_of_materials_read_deleted`;--> statement-breakpoint
CREATE TRIGGER `bill_of_materials_read_deleted` AFTER DELETE ON `bill_of_materials`
WHEN EXISTS (SELECT 1 FROM products WHERE id = old.product_id) BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = old.product_id), random() WHERE (SELECT root_id FROM products WHERE id = old.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
DROP TRIGGER `images_read_deleted`;--> statement-breakpoint
CREATE TRIGGER `images_read_deleted` AFTER DELETE ON `images`
WHEN EXISTS (SELECT 1 FROM products WHERE id = old.product_id) BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = old.product_id), random() WHERE (SELECT root_id FROM products WHERE id = old.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
DROP TRIGGER `files_read_deleted`;--> statement-breakpoint
CREATE TRIGGER `files_read_deleted` AFTER DELETE ON `files`
WHEN EXISTS (SELECT 1 FROM products WHERE id = old.product_id) BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = old.product_id), random() WHERE (SELECT root_id FROM products WHERE id = old.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
DROP TRIGGER `videos_read_deleted`;--> statement-breakpoint
CREATE TRIGGER `videos_read_deleted` AFTER DELETE ON `videos`
WHEN EXISTS (SELECT 1 FROM products WHERE id = old.product_id) BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = old.product_id), random() WHERE (SELECT root_id FROM products WHERE id = old.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;
