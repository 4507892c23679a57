CREATE TABLE `backup_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`status` text DEFAULT 'running' NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`state` text,
	`lease_id` text,
	`lease_until` integer,
	`failures` integer DEFAULT 0 NOT NULL,
	`failure_reason` text,
	`tables` integer,
	`rows` integer,
	`bytes` integer,
	CONSTRAINT "backup_runs_status" CHECK("backup_runs"."status" IN ('running', 'complete', 'failed'))
);
--> statement-breakpoint
CREATE INDEX `backup_runs_started_idx` ON `backup_runs` (`started_at`);