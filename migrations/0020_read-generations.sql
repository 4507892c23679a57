CREATE TABLE `read_generations` (
	`name` text PRIMARY KEY NOT NULL,
	`generation` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `tree_generations` (
	`root_id` integer PRIMARY KEY NOT NULL,
	`generation` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `products` ADD `root_id` integer;--> statement-breakpoint
CREATE INDEX `products_root_idx` ON `products` (`root_id`);--> statement-breakpoint
-- Validators of the cached public reads (docs/storage.md "Cached reads"). Every write that changes what a
-- product or component read, a tree, a list, facets or suggestions show gives a generation a fresh random
-- value in its own transaction, so a cached answer is served only while its generation is the one its read
-- sees. Random, not counted: after a restore of the database (or a wiped test database) the values that
-- follow are not ones a cached copy was stored with.
INSERT INTO read_generations (name, generation) VALUES ('catalogue', random()), ('reference', random());--> statement-breakpoint
-- Every record knows its base product (components never move between trees).
WITH RECURSIVE tree(id, root_id) AS (
  SELECT id, id FROM products WHERE parent_id IS NULL
  UNION ALL SELECT p.id, t.root_id FROM products p JOIN tree t ON p.parent_id = t.id)
UPDATE products SET root_id = (SELECT root_id FROM tree WHERE tree.id = products.id);--> statement-breakpoint
CREATE TRIGGER `products_read_inserted` AFTER INSERT ON `products` BEGIN
  UPDATE products SET root_id = CASE WHEN new.parent_id IS NULL THEN new.id ELSE (SELECT root_id FROM products WHERE id = new.parent_id) END
    WHERE id = new.id AND root_id IS NULL;
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = new.id), random() WHERE (SELECT root_id FROM products WHERE id = new.id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
-- Any change but the insert trigger's own setting of root_id.
CREATE TRIGGER `products_read_updated` AFTER UPDATE ON `products` WHEN old.root_id IS NOT NULL BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT new.root_id, random() WHERE new.root_id IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  INSERT INTO tree_generations (root_id, generation) SELECT old.root_id, random() WHERE old.root_id IS NOT NULL AND old.root_id IS NOT new.root_id
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `products_read_deleted` AFTER DELETE ON `products` BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT old.root_id, random() WHERE old.root_id IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `bill_of_materials_read_inserted` AFTER INSERT ON `bill_of_materials` BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = new.product_id), random() WHERE (SELECT root_id FROM products WHERE id = new.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `bill_of_materials_read_updated` AFTER UPDATE ON `bill_of_materials` BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = new.product_id), random() WHERE (SELECT root_id FROM products WHERE id = new.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = old.product_id), random() WHERE old.product_id IS NOT new.product_id AND (SELECT root_id FROM products WHERE id = old.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `bill_of_materials_read_deleted` AFTER DELETE ON `bill_of_materials` BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = old.product_id), random() WHERE (SELECT root_id FROM products WHERE id = old.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `images_read_inserted` AFTER INSERT ON `images` BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = new.product_id), random() WHERE (SELECT root_id FROM products WHERE id = new.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `images_read_updated` AFTER UPDATE ON `images` BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = new.product_id), random() WHERE (SELECT root_id FROM products WHERE id = new.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = old.product_id), random() WHERE old.product_id IS NOT new.product_id AND (SELECT root_id FROM products WHERE id = old.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `images_read_deleted` AFTER DELETE ON `images` BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = old.product_id), random() WHERE (SELECT root_id FROM products WHERE id = old.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `files_read_inserted` AFTER INSERT ON `files` BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = new.product_id), random() WHERE (SELECT root_id FROM products WHERE id = new.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `files_read_updated` AFTER UPDATE ON `files` BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = new.product_id), random() WHERE (SELECT root_id FROM products WHERE id = new.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = old.product_id), random() WHERE old.product_id IS NOT new.product_id AND (SELECT root_id FROM products WHERE id = old.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `files_read_deleted` AFTER DELETE ON `files` BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = old.product_id), random() WHERE (SELECT root_id FROM products WHERE id = old.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `videos_read_inserted` AFTER INSERT ON `videos` BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = new.product_id), random() WHERE (SELECT root_id FROM products WHERE id = new.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `videos_read_updated` AFTER UPDATE ON `videos` BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = new.product_id), random() WHERE (SELECT root_id FROM products WHERE id = new.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = old.product_id), random() WHERE old.product_id IS NOT new.product_id AND (SELECT root_id FROM products WHERE id = old.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `videos_read_deleted` AFTER DELETE ON `videos` BEGIN
  INSERT INTO tree_generations (root_id, generation) SELECT (SELECT root_id FROM products WHERE id = old.product_id), random() WHERE (SELECT root_id FROM products WHERE id = old.product_id) IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
-- What a read shows of an owner: their name, and whether their profile lets the viewer see it.
CREATE TRIGGER `users_read_updated` AFTER UPDATE OF username, profile_visibility ON `users` BEGIN
  INSERT INTO tree_generations (root_id, generation)
    SELECT DISTINCT root_id, random() FROM products WHERE owner_id = new.id AND root_id IS NOT NULL
    ON CONFLICT (root_id) DO UPDATE SET generation = random();
  UPDATE read_generations SET generation = random() WHERE name = 'catalogue';
END;--> statement-breakpoint
CREATE TRIGGER `materials_read_renamed` AFTER UPDATE OF name ON `materials` BEGIN
  UPDATE read_generations SET generation = random() WHERE name IN ('catalogue', 'reference');
END;--> statement-breakpoint
CREATE TRIGGER `materials_read_deleted` AFTER DELETE ON `materials` BEGIN
  UPDATE read_generations SET generation = random() WHERE name IN ('catalogue', 'reference');
END;--> statement-breakpoint
CREATE TRIGGER `product_types_read_renamed` AFTER UPDATE OF name ON `product_types` BEGIN
  UPDATE read_generations SET generation = random() WHERE name IN ('catalogue', 'reference');
END;--> statement-breakpoint
CREATE TRIGGER `product_types_read_deleted` AFTER DELETE ON `product_types` BEGIN
  UPDATE read_generations SET generation = random() WHERE name IN ('catalogue', 'reference');
END;
