-- Dataset releases (issue 23; docs/releases.md): the contributor terms on users, the releases
-- and their files, and the staging tables the snapshot batch fills. Migration 0019 (0018 is
-- another change's). The triggers at the end are hand-written (drizzle-kit has no notation for
-- them): a published release, and the list of its files, can never change again.
CREATE TABLE `release_files` (
	`release_version` text NOT NULL,
	`path` text NOT NULL,
	`bytes` integer NOT NULL,
	`sha256` text NOT NULL,
	`media_type` text NOT NULL,
	PRIMARY KEY(`release_version`, `path`),
	FOREIGN KEY (`release_version`) REFERENCES `releases`(`version`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `release_images` (
	`release_version` text NOT NULL,
	`file` text NOT NULL,
	`record_id` integer NOT NULL,
	`storage_key` text NOT NULL,
	`width` integer NOT NULL,
	`height` integer NOT NULL,
	`bytes` integer NOT NULL,
	`content_type` text NOT NULL,
	PRIMARY KEY(`release_version`, `file`, `record_id`),
	FOREIGN KEY (`release_version`) REFERENCES `releases`(`version`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `release_record_materials` (
	`release_version` text NOT NULL,
	`record_id` integer NOT NULL,
	`material_id` integer NOT NULL,
	`quantity` real NOT NULL,
	`unit` text NOT NULL,
	PRIMARY KEY(`release_version`, `record_id`, `material_id`),
	FOREIGN KEY (`release_version`) REFERENCES `releases`(`version`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `release_records` (
	`release_version` text NOT NULL,
	`id` integer NOT NULL,
	`parent_id` integer,
	`amount_in_parent` integer,
	`owner_id` integer NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`brand` text,
	`model` text,
	`product_type_id` integer,
	`weight_g` real,
	`height_cm` real,
	`width_cm` real,
	`depth_cm` real,
	`volume_cm3` real,
	`circularity_properties` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`release_version`, `id`),
	FOREIGN KEY (`release_version`) REFERENCES `releases`(`version`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `release_reference_rows` (
	`release_version` text NOT NULL,
	`table_name` text NOT NULL,
	`position` integer NOT NULL,
	`row` text NOT NULL,
	PRIMARY KEY(`release_version`, `table_name`, `position`),
	FOREIGN KEY (`release_version`) REFERENCES `releases`(`version`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `releases` (
	`version` text PRIMARY KEY NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`licence` text NOT NULL,
	`status` text DEFAULT 'building' NOT NULL,
	`base_url` text NOT NULL,
	`build_id` text NOT NULL,
	`snapshot_at` integer,
	`records` integer,
	`base_products` integer,
	`images` integer,
	`record_materials` integer,
	`records_written` integer DEFAULT 0 NOT NULL,
	`build_state` text,
	`lease_id` text,
	`lease_until` integer,
	`build_failures` integer DEFAULT 0 NOT NULL,
	`failure_reason` text,
	`published_at` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	CONSTRAINT "releases_status" CHECK("releases"."status" IN ('building', 'published', 'failed')),
	CONSTRAINT "releases_version" CHECK(length("releases"."version") BETWEEN 1 AND 32 AND "releases"."version" GLOB '[0-9]*' AND "releases"."version" NOT GLOB '*[^0-9A-Za-z.-]*'),
	CONSTRAINT "releases_state_fields" CHECK(("releases"."status" = 'published') = ("releases"."published_at" IS NOT NULL AND "releases"."snapshot_at" IS NOT NULL) AND ("releases"."status" = 'failed') = ("releases"."failure_reason" IS NOT NULL))
);
--> statement-breakpoint
CREATE INDEX `releases_created_idx` ON `releases` (`created_at`,`version`);--> statement-breakpoint
ALTER TABLE `users` ADD `terms_accepted_version` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `terms_accepted_at` integer;--> statement-breakpoint
CREATE TRIGGER `releases_published_no_update` BEFORE UPDATE ON `releases` WHEN OLD.`status` = 'published'
BEGIN SELECT RAISE(ABORT, 'a published release cannot change'); END;--> statement-breakpoint
CREATE TRIGGER `releases_published_no_delete` BEFORE DELETE ON `releases` WHEN OLD.`status` = 'published'
BEGIN SELECT RAISE(ABORT, 'a published release cannot be deleted'); END;--> statement-breakpoint
CREATE TRIGGER `release_files_published_no_insert` BEFORE INSERT ON `release_files`
WHEN (SELECT `status` FROM `releases` WHERE `version` = NEW.`release_version`) = 'published'
BEGIN SELECT RAISE(ABORT, 'a published release cannot change'); END;--> statement-breakpoint
CREATE TRIGGER `release_files_published_no_update` BEFORE UPDATE ON `release_files`
WHEN (SELECT `status` FROM `releases` WHERE `version` = OLD.`release_version`) = 'published'
BEGIN SELECT RAISE(ABORT, 'a published release cannot change'); END;--> statement-breakpoint
CREATE TRIGGER `release_files_published_no_delete` BEFORE DELETE ON `release_files`
WHEN (SELECT `status` FROM `releases` WHERE `version` = OLD.`release_version`) = 'published'
BEGIN SELECT RAISE(ABORT, 'a published release cannot change'); END;
