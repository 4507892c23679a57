-- The products table is rebuilt first (a new depth column and CHECK; no product route existed
-- before, so it holds no components and depth 0/1 is exact), before the tables that reference it.
PRAGMA defer_foreign_keys = on;--> statement-breakpoint
CREATE TABLE `__new_products` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`parent_id` integer,
	`owner_id` integer NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`brand` text,
	`model` text,
	`weight_g` real,
	`height_cm` real,
	`width_cm` real,
	`depth_cm` real,
	`volume_cm3` real GENERATED ALWAYS AS (height_cm * width_cm * depth_cm) VIRTUAL,
	`circularity_properties` text,
	`product_type_id` integer,
	`amount_in_parent` integer,
	`depth` integer DEFAULT 0 NOT NULL,
	`version` integer DEFAULT 1 NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`parent_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`product_type_id`) REFERENCES `product_types`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "products_name_length" CHECK(length("__new_products"."name") BETWEEN 2 AND 100),
	CONSTRAINT "products_component_amount" CHECK(("__new_products"."parent_id" IS NULL AND "__new_products"."amount_in_parent" IS NULL) OR ("__new_products"."parent_id" IS NOT NULL AND "__new_products"."amount_in_parent" BETWEEN 1 AND 1000)),
	CONSTRAINT "products_depth" CHECK(("__new_products"."parent_id" IS NULL AND "__new_products"."depth" = 0) OR ("__new_products"."parent_id" IS NOT NULL AND "__new_products"."depth" BETWEEN 1 AND 10)),
	CONSTRAINT "products_positive_dimensions" CHECK(("__new_products"."weight_g" IS NULL OR "__new_products"."weight_g" > 0) AND ("__new_products"."height_cm" IS NULL OR "__new_products"."height_cm" > 0) AND ("__new_products"."width_cm" IS NULL OR "__new_products"."width_cm" > 0) AND ("__new_products"."depth_cm" IS NULL OR "__new_products"."depth_cm" > 0))
);
--> statement-breakpoint
INSERT INTO `__new_products`("id", "parent_id", "owner_id", "name", "description", "brand", "model", "weight_g", "height_cm", "width_cm", "depth_cm", "circularity_properties", "product_type_id", "amount_in_parent", "depth", "version", "created_at", "updated_at") SELECT "id", "parent_id", "owner_id", "name", "description", "brand", "model", "weight_g", "height_cm", "width_cm", "depth_cm", "circularity_properties", "product_type_id", "amount_in_parent", CASE WHEN "parent_id" IS NULL THEN 0 ELSE 1 END, "version", "created_at", "updated_at" FROM `products`;--> statement-breakpoint
DROP TABLE `products`;--> statement-breakpoint
ALTER TABLE `__new_products` RENAME TO `products`;--> statement-breakpoint
CREATE INDEX `products_owner_idx` ON `products` (`owner_id`);--> statement-breakpoint
CREATE INDEX `products_parent_idx` ON `products` (`parent_id`);--> statement-breakpoint
CREATE INDEX `products_base_created_idx` ON `products` (`created_at`) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE TABLE `bill_of_materials` (
	`product_id` integer NOT NULL,
	`material_id` integer NOT NULL,
	`quantity` real NOT NULL,
	`unit` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	PRIMARY KEY(`product_id`, `material_id`),
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`material_id`) REFERENCES `materials`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`unit`) REFERENCES `units`(`code`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "bill_of_materials_quantity" CHECK("bill_of_materials"."quantity" > 0 AND "bill_of_materials"."quantity" <= 1000000)
);
--> statement-breakpoint
CREATE INDEX `bill_of_materials_material_idx` ON `bill_of_materials` (`material_id`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`user_id` integer NOT NULL,
	`key` text NOT NULL,
	`target` text NOT NULL,
	`body_hash` text NOT NULL,
	`response_status` integer,
	`response_body` text,
	`response_headers` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `key`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_expires_idx` ON `idempotency_keys` (`expires_at`);--> statement-breakpoint
CREATE TABLE `materials` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `materials_name_unique` ON `materials` (`name`);--> statement-breakpoint
CREATE TABLE `videos` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`product_id` integer NOT NULL,
	`url` text NOT NULL,
	`title` text,
	`description` text,
	`video_metadata` text,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `videos_product_idx` ON `videos` (`product_id`);--> statement-breakpoint
--> statement-breakpoint
-- Full-text search over name, description, brand and model (hand-written: drizzle-kit has no
-- notation for FTS5). An external-content index kept in step with products by triggers, which
-- also fire for rows removed by ON DELETE CASCADE.
CREATE VIRTUAL TABLE `products_fts` USING fts5(name, description, brand, model, content='products', content_rowid='id', tokenize='unicode61 remove_diacritics 2');--> statement-breakpoint
CREATE TRIGGER `products_fts_after_insert` AFTER INSERT ON `products` BEGIN
  INSERT INTO products_fts(rowid, name, description, brand, model) VALUES (new.id, new.name, new.description, new.brand, new.model);
END;--> statement-breakpoint
CREATE TRIGGER `products_fts_after_delete` AFTER DELETE ON `products` BEGIN
  INSERT INTO products_fts(products_fts, rowid, name, description, brand, model) VALUES ('delete', old.id, old.name, old.description, old.brand, old.model);
END;--> statement-breakpoint
CREATE TRIGGER `products_fts_after_update` AFTER UPDATE OF name, description, brand, model ON `products` BEGIN
  INSERT INTO products_fts(products_fts, rowid, name, description, brand, model) VALUES ('delete', old.id, old.name, old.description, old.brand, old.model);
  INSERT INTO products_fts(rowid, name, description, brand, model) VALUES (new.id, new.name, new.description, new.brand, new.model);
END;
