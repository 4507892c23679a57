CREATE TABLE `camera_streams` (
	`camera_id` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`product_id` integer NOT NULL,
	`broadcast_id` text NOT NULL,
	`stream_id` text NOT NULL,
	`stream_key_sealed` text NOT NULL,
	`title` text NOT NULL,
	`description` text,
	`privacy_status` text NOT NULL,
	`started_at` integer NOT NULL,
	FOREIGN KEY (`camera_id`) REFERENCES `cameras`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`product_id`) REFERENCES `products`(`id`) ON UPDATE no action ON DELETE cascade
);
