CREATE TABLE `product_types` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `product_types_name_unique` ON `product_types` (`name`);--> statement-breakpoint
CREATE TABLE `products` (
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
	`version` integer DEFAULT 1 NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`parent_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`product_type_id`) REFERENCES `product_types`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "products_name_length" CHECK(length("products"."name") BETWEEN 2 AND 100),
	CONSTRAINT "products_component_amount" CHECK(("products"."parent_id" IS NULL AND "products"."amount_in_parent" IS NULL) OR ("products"."parent_id" IS NOT NULL AND "products"."amount_in_parent" BETWEEN 1 AND 1000)),
	CONSTRAINT "products_positive_dimensions" CHECK(("products"."weight_g" IS NULL OR "products"."weight_g" > 0) AND ("products"."height_cm" IS NULL OR "products"."height_cm" > 0) AND ("products"."width_cm" IS NULL OR "products"."width_cm" > 0) AND ("products"."depth_cm" IS NULL OR "products"."depth_cm" > 0))
);
--> statement-breakpoint
CREATE INDEX `products_owner_idx` ON `products` (`owner_id`);--> statement-breakpoint
CREATE INDEX `products_parent_idx` ON `products` (`parent_id`);--> statement-breakpoint
CREATE INDEX `products_base_created_idx` ON `products` (`created_at`) WHERE "products"."parent_id" IS NULL;--> statement-breakpoint
CREATE TABLE `units` (
	`code` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`dimension` text NOT NULL,
	`to_base` real NOT NULL,
	`position` integer NOT NULL,
	CONSTRAINT "units_dimension_check" CHECK("units"."dimension" IN ('mass', 'length'))
);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`email` text NOT NULL,
	`email_canonical` text NOT NULL,
	`username` text NOT NULL,
	`hashed_password` text,
	`is_active` integer DEFAULT true NOT NULL,
	`is_verified` integer DEFAULT false NOT NULL,
	`is_superuser` integer DEFAULT false NOT NULL,
	`role` text DEFAULT 'contributor' NOT NULL,
	`profile_visibility` text DEFAULT 'public' NOT NULL,
	`last_login_at` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	CONSTRAINT "users_role_check" CHECK("users"."role" IN ('contributor', 'lab')),
	CONSTRAINT "users_profile_visibility_check" CHECK("users"."profile_visibility" IN ('public', 'community', 'private')),
	CONSTRAINT "users_superuser_is_lab" CHECK("users"."is_superuser" = 0 OR "users"."role" = 'lab')
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_canonical_unique` ON `users` (`email_canonical`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_unique` ON `users` (`username`);