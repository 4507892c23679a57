CREATE TABLE `files` (
	`id` text PRIMARY KEY NOT NULL,
	`product_id` integer NOT NULL,
	`storage_key` text NOT NULL,
	`filename` text NOT NULL,
	`content_type` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`description` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`uploaded_by` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`uploaded_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "files_status" CHECK("files"."status" IN ('pending', 'clean')),
	CONSTRAINT "files_id" CHECK(length("files"."id") = 32 AND "files"."id" NOT GLOB '*[^0-9a-f]*'),
	CONSTRAINT "files_size" CHECK("files"."size_bytes" > 0)
);
--> statement-breakpoint
CREATE INDEX `files_product_idx` ON `files` (`product_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `files_storage_key_idx` ON `files` (`storage_key`);--> statement-breakpoint
CREATE TABLE `images` (
	`id` text PRIMARY KEY NOT NULL,
	`product_id` integer NOT NULL,
	`storage_key` text NOT NULL,
	`filename` text NOT NULL,
	`content_type` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`description` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`uploaded_by` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	`width` integer NOT NULL,
	`height` integer NOT NULL,
	`image_metadata` text,
	`thumbnails_ready` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`uploaded_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "images_status" CHECK("images"."status" IN ('pending', 'clean')),
	CONSTRAINT "images_id" CHECK(length("images"."id") = 32 AND "images"."id" NOT GLOB '*[^0-9a-f]*'),
	CONSTRAINT "images_size" CHECK("images"."size_bytes" > 0),
	CONSTRAINT "images_dimensions" CHECK("images"."width" > 0 AND "images"."height" > 0)
);
--> statement-breakpoint
CREATE INDEX `images_product_idx` ON `images` (`product_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `images_storage_key_idx` ON `images` (`storage_key`);