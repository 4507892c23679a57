CREATE TABLE `mfa_challenges` (
	`fingerprint` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`transport` text NOT NULL,
	`tokens_valid_after` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`claimed_by` text,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "mfa_challenges_transport_check" CHECK("mfa_challenges"."transport" IN ('bearer', 'cookie'))
);
--> statement-breakpoint
CREATE INDEX `mfa_challenges_user_idx` ON `mfa_challenges` (`user_id`);--> statement-breakpoint
CREATE TABLE `recovery_codes` (
	`user_id` integer NOT NULL,
	`code_hash` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	PRIMARY KEY(`user_id`, `code_hash`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `users` ADD `totp_secret` text;--> statement-breakpoint
ALTER TABLE `users` ADD `totp_enabled_at` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `totp_last_step` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `is_system` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `users_one_system_account` ON `users` (`is_system`) WHERE "users"."is_system" = 1;--> statement-breakpoint
-- The inactive account that holds the products of deleted accounts: no password, no way to sign
-- in, a reserved username and an address under the reserved .invalid domain.
INSERT INTO `users` (`email`, `email_canonical`, `username`, `hashed_password`, `is_active`, `is_verified`, `profile_visibility`, `is_system`)
VALUES ('deleted-accounts@relab.invalid', 'deleted-accounts@relab.invalid', 'deleted', NULL, 0, 0, 'private', 1);
