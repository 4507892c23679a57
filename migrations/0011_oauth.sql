CREATE TABLE `oauth_accounts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`provider` text NOT NULL,
	`account_id` text NOT NULL,
	`account_email` text,
	`access_token_sealed` text,
	`refresh_token_sealed` text,
	`access_token_expires_at` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "oauth_accounts_provider_check" CHECK("oauth_accounts"."provider" IN ('google', 'github', 'google-youtube'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_accounts_provider_account` ON `oauth_accounts` (`provider`,`account_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_accounts_user_provider` ON `oauth_accounts` (`user_id`,`provider`);--> statement-breakpoint
CREATE TABLE `oauth_handoffs` (
	`fingerprint` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`user_id` integer NOT NULL,
	`secret_sealed` text,
	`tokens_valid_after` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `oauth_state_uses` (
	`nonce` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
);
