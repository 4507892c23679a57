CREATE TABLE `id_blocks` (
	`name` text PRIMARY KEY NOT NULL,
	`next_id` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `id_blocks` (`name`, `next_id`) SELECT 'products', coalesce(max(`id`), 0) + 1 FROM `products`;
