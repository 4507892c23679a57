CREATE TABLE `categories` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`external_id` text,
	`taxonomy_id` integer NOT NULL,
	`supercategory_id` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`taxonomy_id`) REFERENCES `taxonomies`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`supercategory_id`) REFERENCES `categories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `categories_taxonomy_root_idx` ON `categories` (`taxonomy_id`,`name`) WHERE "categories"."supercategory_id" IS NULL;--> statement-breakpoint
CREATE INDEX `categories_supercategory_idx` ON `categories` (`supercategory_id`,`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `categories_taxonomy_external_unique` ON `categories` (`taxonomy_id`,`external_id`);--> statement-breakpoint
CREATE TABLE `material_categories` (
	`material_id` integer NOT NULL,
	`category_id` integer NOT NULL,
	PRIMARY KEY(`material_id`, `category_id`),
	FOREIGN KEY (`material_id`) REFERENCES `materials`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`category_id`) REFERENCES `categories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `material_categories_category_idx` ON `material_categories` (`category_id`);--> statement-breakpoint
CREATE TABLE `product_type_categories` (
	`product_type_id` integer NOT NULL,
	`category_id` integer NOT NULL,
	PRIMARY KEY(`product_type_id`, `category_id`),
	FOREIGN KEY (`product_type_id`) REFERENCES `product_types`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`category_id`) REFERENCES `categories`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `product_type_categories_category_idx` ON `product_type_categories` (`category_id`);--> statement-breakpoint
CREATE TABLE `taxonomies` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`version` text NOT NULL,
	`description` text,
	`domains` text NOT NULL,
	`source` text,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `taxonomies_name_version_unique` ON `taxonomies` (`name`,`version`);--> statement-breakpoint
-- Columns added in place: rebuilding `materials` would need its foreign keys off, which D1
-- does not allow inside a migration, and bill_of_materials refers to it.
ALTER TABLE `materials` ADD `density_kg_m3` real CONSTRAINT `materials_density_positive` CHECK (`density_kg_m3` IS NULL OR `density_kg_m3` > 0);--> statement-breakpoint
ALTER TABLE `materials` ADD `is_crm` integer DEFAULT false NOT NULL;
