CREATE TABLE `camera_retirements` (
	`camera_id` text PRIMARY KEY NOT NULL,
	`owner_id` integer NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `camera_stream_endings` (
	`camera_id` text NOT NULL,
	`broadcast_id` text NOT NULL,
	`stream_id` text NOT NULL,
	`user_id` integer NOT NULL,
	`product_id` integer NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	PRIMARY KEY(`camera_id`, `broadcast_id`)
);
--> statement-breakpoint
CREATE INDEX `camera_stream_endings_product_idx` ON `camera_stream_endings` (`product_id`);--> statement-breakpoint
-- Written by hand (drizzle-kit does not know triggers): a camera that goes with its owner's account,
-- and a live stream that goes with its product, leave what the camera plugin still has to do outside
-- D1 in its clean-up tables, in the deleting transaction itself (docs/storage.md, Cameras).
CREATE TRIGGER `camera_retired_with_owner` AFTER DELETE ON `cameras`
WHEN NOT EXISTS (SELECT 1 FROM users WHERE id = old.owner_id) BEGIN
  INSERT INTO camera_retirements (camera_id, owner_id) VALUES (old.id, old.owner_id) ON CONFLICT DO NOTHING;
END;--> statement-breakpoint
CREATE TRIGGER `camera_stream_ended_with_product` AFTER DELETE ON `camera_streams`
WHEN NOT EXISTS (SELECT 1 FROM products WHERE id = old.product_id) BEGIN
  INSERT INTO camera_stream_endings (camera_id, broadcast_id, stream_id, user_id, product_id)
  VALUES (old.camera_id, old.broadcast_id, old.stream_id, old.user_id, old.product_id) ON CONFLICT DO NOTHING;
END;
