ALTER TABLE `camera_streams` ADD `platform_status` text;--> statement-breakpoint
ALTER TABLE `camera_streams` ADD `platform_checked_at` integer;