-- Idempotency keys are scoped to user + method and path + key (decisions.md), and each row names
-- the request that claimed it and, once the create's own batch committed, the record it made.
-- Existing rows keep their meaning: the scope is the target without its query string, and a
-- running row of the old code (which cannot be stored by the new one) simply runs out its lease.
PRAGMA defer_foreign_keys = on;--> statement-breakpoint
CREATE TABLE `__new_idempotency_keys` (
	`user_id` integer NOT NULL,
	`scope` text NOT NULL,
	`key` text NOT NULL,
	`target` text NOT NULL,
	`body_hash` text NOT NULL,
	`claim` text NOT NULL,
	`resource_id` integer,
	`response_status` integer,
	`response_body` text,
	`response_headers` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `scope`, `key`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_idempotency_keys`("user_id", "scope", "key", "target", "body_hash", "claim", "resource_id", "response_status", "response_body", "response_headers", "created_at", "expires_at") SELECT "user_id", CASE WHEN instr("target", '?') > 0 THEN substr("target", 1, instr("target", '?') - 1) ELSE "target" END, "key", "target", "body_hash", 'migrated', NULL, "response_status", "response_body", "response_headers", "created_at", "expires_at" FROM `idempotency_keys`;--> statement-breakpoint
DROP TABLE `idempotency_keys`;--> statement-breakpoint
ALTER TABLE `__new_idempotency_keys` RENAME TO `idempotency_keys`;--> statement-breakpoint
CREATE INDEX `idempotency_keys_expires_idx` ON `idempotency_keys` (`expires_at`);--> statement-breakpoint
ALTER TABLE `users` ADD `recovery_codes_generation` text;