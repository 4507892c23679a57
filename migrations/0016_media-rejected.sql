-- Rebuilds images and files for the `rejected` state (SQLite cannot change a CHECK in place).
-- D1 ignores `foreign_keys = OFF`; nothing references these tables, and their own references are
-- checked at commit.
PRAGMA defer_foreign_keys = on;--> statement-breakpoint
CREATE TABLE `__new_files` (
	`id` text PRIMARY KEY NOT NULL,
	`product_id` integer NOT NULL,
	`storage_key` text NOT NULL,
	`filename` text NOT NULL,
	`content_type` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`description` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`rejected_reason` text,
	`uploaded_by` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`uploaded_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "files_status" CHECK("__new_files"."status" IN ('pending', 'clean', 'rejected')),
	CONSTRAINT "files_rejected_reason" CHECK(("__new_files"."status" = 'rejected' AND "__new_files"."rejected_reason" IN ('malware', 'undecodable', 'unscanned')) OR ("__new_files"."status" <> 'rejected' AND "__new_files"."rejected_reason" IS NULL)),
	CONSTRAINT "files_id" CHECK(length("__new_files"."id") = 32 AND "__new_files"."id" NOT GLOB '*[^0-9a-f]*'),
	CONSTRAINT "files_size" CHECK("__new_files"."size_bytes" > 0)
);
--> statement-breakpoint
INSERT INTO `__new_files`("id", "product_id", "storage_key", "filename", "content_type", "size_bytes", "description", "status", "rejected_reason", "uploaded_by", "created_at", "updated_at") SELECT "id", "product_id", "storage_key", "filename", "content_type", "size_bytes", "description", "status", NULL, "uploaded_by", "created_at", "updated_at" FROM `files`;--> statement-breakpoint
DROP TABLE `files`;--> statement-breakpoint
ALTER TABLE `__new_files` RENAME TO `files`;--> statement-breakpoint
CREATE INDEX `files_product_idx` ON `files` (`product_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `files_storage_key_idx` ON `files` (`storage_key`);--> statement-breakpoint
CREATE INDEX `files_pending_idx` ON `files` (`updated_at`) WHERE status = 'pending';--> statement-breakpoint
CREATE TABLE `__new_images` (
	`id` text PRIMARY KEY NOT NULL,
	`product_id` integer NOT NULL,
	`storage_key` text NOT NULL,
	`filename` text NOT NULL,
	`content_type` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`description` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`rejected_reason` text,
	`uploaded_by` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	`width` integer NOT NULL,
	`height` integer NOT NULL,
	`image_metadata` text,
	`thumbnails_ready` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`uploaded_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "images_status" CHECK("__new_images"."status" IN ('pending', 'clean', 'rejected')),
	CONSTRAINT "images_rejected_reason" CHECK(("__new_images"."status" = 'rejected' AND "__new_images"."rejected_reason" IN ('malware', 'undecodable', 'unscanned')) OR ("__new_images"."status" <> 'rejected' AND "__new_images"."rejected_reason" IS NULL)),
	CONSTRAINT "images_id" CHECK(length("__new_images"."id") = 32 AND "__new_images"."id" NOT GLOB '*[^0-9a-f]*'),
	CONSTRAINT "images_size" CHECK("__new_images"."size_bytes" > 0),
	CONSTRAINT "images_dimensions" CHECK("__new_images"."width" > 0 AND "__new_images"."height" > 0)
);
--> statement-breakpoint
INSERT INTO `__new_images`("id", "product_id", "storage_key", "filename", "content_type", "size_bytes", "description", "status", "rejected_reason", "uploaded_by", "created_at", "updated_at", "width", "height", "image_metadata", "thumbnails_ready") SELECT "id", "product_id", "storage_key", "filename", "content_type", "size_bytes", "description", "status", NULL, "uploaded_by", "created_at", "updated_at", "width", "height", "image_metadata", "thumbnails_ready" FROM `images`;--> statement-breakpoint
DROP TABLE `images`;--> statement-breakpoint
ALTER TABLE `__new_images` RENAME TO `images`;--> statement-breakpoint
CREATE INDEX `images_product_idx` ON `images` (`product_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `images_storage_key_idx` ON `images` (`storage_key`);--> statement-breakpoint
CREATE INDEX `images_pending_idx` ON `images` (`updated_at`) WHERE status = 'pending';