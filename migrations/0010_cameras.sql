CREATE TABLE `camera_assertion_jtis` (
	`camera_id` text NOT NULL,
	`jti` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`camera_id`, `jti`),
	FOREIGN KEY (`camera_id`) REFERENCES `cameras`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `camera_assertion_jtis_expires_idx` ON `camera_assertion_jtis` (`camera_id`,`expires_at`);--> statement-breakpoint
CREATE TABLE `camera_pairings` (
	`code` text PRIMARY KEY NOT NULL,
	`fingerprint_hash` text NOT NULL,
	`key_id` text NOT NULL,
	`public_key_jwk` text NOT NULL,
	`camera_id` text,
	`expires_at` integer NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`camera_id`) REFERENCES `cameras`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `camera_pairings_expires_idx` ON `camera_pairings` (`expires_at`);--> statement-breakpoint
CREATE TABLE `cameras` (
	`id` text PRIMARY KEY NOT NULL,
	`owner_id` integer NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`key_id` text NOT NULL,
	`public_key_jwk` text NOT NULL,
	`last_seen_at` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `cameras_owner_idx` ON `cameras` (`owner_id`,`created_at`);