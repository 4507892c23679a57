DROP INDEX `files_product_idx`;--> statement-breakpoint
CREATE INDEX `files_product_idx` ON `files` (`product_id`,`created_at`);--> statement-breakpoint
DROP INDEX `images_product_idx`;--> statement-breakpoint
CREATE INDEX `images_product_idx` ON `images` (`product_id`,`created_at`);