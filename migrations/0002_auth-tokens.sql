CREATE TABLE `refresh_tokens` (
	`fingerprint` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`family_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	`session_expires_at` integer NOT NULL,
	`rotated_at` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `refresh_tokens_user_idx` ON `refresh_tokens` (`user_id`);--> statement-breakpoint
CREATE INDEX `refresh_tokens_family_idx` ON `refresh_tokens` (`family_id`);--> statement-breakpoint
ALTER TABLE `users` ADD `tokens_valid_after` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `upload_file_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `upload_total_bytes` integer DEFAULT 0 NOT NULL;