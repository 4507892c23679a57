CREATE TABLE `brand_counts` (
	`brand` text PRIMARY KEY NOT NULL,
	`base_products` integer NOT NULL,
	`records` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `brand_counts_base_idx` ON `brand_counts` ("base_products" DESC,`brand`);
--> statement-breakpoint
CREATE INDEX `brand_counts_records_idx` ON `brand_counts` ("records" DESC,`brand`);
--> statement-breakpoint
CREATE INDEX `brand_counts_prefix1_idx` ON `brand_counts` (lower(substr("brand", 1, 1)),"records" DESC,`brand`);
--> statement-breakpoint
CREATE INDEX `brand_counts_prefix2_idx` ON `brand_counts` (lower(substr("brand", 1, 2)),"records" DESC,`brand`);
--> statement-breakpoint
CREATE TABLE `catalogue_totals` (
	`name` text PRIMARY KEY NOT NULL,
	`count` integer DEFAULT 0 NOT NULL,
	`mass_g` real DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE `daily_counts` (
	`day` integer PRIMARY KEY NOT NULL,
	`teardowns` integer DEFAULT 0 NOT NULL,
	`parts` integer DEFAULT 0 NOT NULL,
	`mass_g` real DEFAULT 0 NOT NULL,
	`images` integer DEFAULT 0 NOT NULL,
	`users_new` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE `model_counts` (
	`model` text PRIMARY KEY NOT NULL,
	`base_products` integer NOT NULL,
	`records` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `model_counts_base_idx` ON `model_counts` ("base_products" DESC,`model`);
--> statement-breakpoint
CREATE INDEX `model_counts_records_idx` ON `model_counts` ("records" DESC,`model`);
--> statement-breakpoint
CREATE INDEX `model_counts_prefix1_idx` ON `model_counts` (lower(substr("model", 1, 1)),"records" DESC,`model`);
--> statement-breakpoint
CREATE INDEX `model_counts_prefix2_idx` ON `model_counts` (lower(substr("model", 1, 2)),"records" DESC,`model`);
--> statement-breakpoint
CREATE TABLE `owner_counts` (
	`owner_id` integer PRIMARY KEY NOT NULL,
	`base_products` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `prefix_counts` (
	`kind` text NOT NULL,
	`prefix` text NOT NULL,
	`value_count` integer NOT NULL,
	PRIMARY KEY(`kind`, `prefix`)
);
--> statement-breakpoint
CREATE TABLE `product_type_counts` (
	`product_type_id` integer PRIMARY KEY NOT NULL,
	`base_products` integer NOT NULL,
	`components` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `product_types_name_nocase_idx` ON `product_types` ("name" COLLATE NOCASE);
--> statement-breakpoint
CREATE INDEX `products_base_updated_idx` ON `products` (`updated_at`) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_name_idx` ON `products` ("name" COLLATE NOCASE) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_brand_idx` ON `products` ("brand" COLLATE NOCASE) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_model_idx` ON `products` ("model" COLLATE NOCASE) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_type_idx` ON `products` (`product_type_id`) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_weight_idx` ON `products` (`weight_g`) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_owner_idx` ON `products` (`owner_id`,`created_at`) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_owner_updated_idx` ON `products` (`owner_id`,`updated_at`) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_owner_name_idx` ON `products` (`owner_id`,"name" COLLATE NOCASE) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_owner_model_idx` ON `products` (`owner_id`,"model" COLLATE NOCASE) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_owner_brand_idx` ON `products` (`owner_id`,"brand" COLLATE NOCASE) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_brand_updated_idx` ON `products` (`brand`,`updated_at`) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_brand_name_idx` ON `products` (`brand`,"name" COLLATE NOCASE) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_brand_model_idx` ON `products` (`brand`,"model" COLLATE NOCASE) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_type_updated_idx` ON `products` (`product_type_id`,`updated_at`) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_type_name_idx` ON `products` (`product_type_id`,"name" COLLATE NOCASE) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_type_model_idx` ON `products` (`product_type_id`,"model" COLLATE NOCASE) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_type_brand_idx` ON `products` (`product_type_id`,"brand" COLLATE NOCASE) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
CREATE INDEX `products_base_type_created_idx` ON `products` (`product_type_id`,`created_at`) WHERE "products"."parent_id" IS NULL;
--> statement-breakpoint
-- Hand-written from here (drizzle-kit has no notation for triggers or virtual tables): docs/storage.md "Counters",
-- docs/product-list.md "Plans".
-- The full-text index holds base products only: only they are listed, and a search's count then reads the
-- index alone (components' text was indexed but never matched: the list requires parent_id IS NULL).
DROP TRIGGER `products_fts_after_insert`;
--> statement-breakpoint
DROP TRIGGER `products_fts_after_delete`;
--> statement-breakpoint
DROP TRIGGER `products_fts_after_update`;
--> statement-breakpoint
DROP TABLE `products_fts`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `products_fts` USING fts5(name, description, brand, model, content='products', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
--> statement-breakpoint
INSERT INTO products_fts (rowid, name, description, brand, model) SELECT id, name, description, brand, model FROM products WHERE parent_id IS NULL;
--> statement-breakpoint
CREATE TRIGGER `products_fts_after_insert` AFTER INSERT ON `products` WHEN new.parent_id IS NULL BEGIN
  INSERT INTO products_fts (rowid, name, description, brand, model) VALUES (new.id, new.name, new.description, new.brand, new.model);
END;
--> statement-breakpoint
CREATE TRIGGER `products_fts_after_delete` AFTER DELETE ON `products` WHEN old.parent_id IS NULL BEGIN
  INSERT INTO products_fts (products_fts, rowid, name, description, brand, model) VALUES ('delete', old.id, old.name, old.description, old.brand, old.model);
END;
--> statement-breakpoint
CREATE TRIGGER `products_fts_after_update` AFTER UPDATE OF name, description, brand, model, parent_id ON `products` WHEN old.parent_id IS NULL OR new.parent_id IS NULL BEGIN
  INSERT INTO products_fts (products_fts, rowid, name, description, brand, model) SELECT 'delete', old.id, old.name, old.description, old.brand, old.model WHERE old.parent_id IS NULL;
  INSERT INTO products_fts (rowid, name, description, brand, model) SELECT new.id, new.name, new.description, new.brand, new.model WHERE new.parent_id IS NULL;
END;
--> statement-breakpoint
-- Trigrams of base products' names and models, folded to lower case: the candidates of a `name[ilike]` or
-- `model[ilike]` of 3 characters or more (the exact instr(lower()) test still decides).
CREATE VIRTUAL TABLE `products_trigram` USING fts5(name, model, content='products', content_rowid='id', tokenize='trigram case_sensitive 0');
--> statement-breakpoint
INSERT INTO products_trigram (rowid, name, model) SELECT id, name, model FROM products WHERE parent_id IS NULL;
--> statement-breakpoint
CREATE TRIGGER `products_trigram_after_insert` AFTER INSERT ON `products` WHEN new.parent_id IS NULL BEGIN
  INSERT INTO products_trigram (rowid, name, model) VALUES (new.id, new.name, new.model);
END;
--> statement-breakpoint
CREATE TRIGGER `products_trigram_after_delete` AFTER DELETE ON `products` WHEN old.parent_id IS NULL BEGIN
  INSERT INTO products_trigram (products_trigram, rowid, name, model) VALUES ('delete', old.id, old.name, old.model);
END;
--> statement-breakpoint
CREATE TRIGGER `products_trigram_after_update` AFTER UPDATE OF name, model, parent_id ON `products` WHEN old.parent_id IS NULL OR new.parent_id IS NULL BEGIN
  INSERT INTO products_trigram (products_trigram, rowid, name, model) SELECT 'delete', old.id, old.name, old.model WHERE old.parent_id IS NULL;
  INSERT INTO products_trigram (rowid, name, model) SELECT new.id, new.name, new.model WHERE new.parent_id IS NULL;
END;
--> statement-breakpoint
-- The counters, filled once from the data, then kept by the triggers below.
INSERT INTO catalogue_totals (name, count, mass_g) VALUES
  ('base_products', (SELECT count(*) FROM products WHERE parent_id IS NULL), (SELECT total(weight_g) FROM products WHERE parent_id IS NULL)),
  ('components', (SELECT count(*) FROM products WHERE parent_id IS NOT NULL), 0),
  ('clean_images', (SELECT count(*) FROM images WHERE status = 'clean'), 0),
  ('active_users', (SELECT count(*) FROM users WHERE is_active = 1 AND is_system = 0), 0);
--> statement-breakpoint
INSERT INTO brand_counts (brand, base_products, records)
  SELECT brand, sum(parent_id IS NULL), count(*) FROM products WHERE brand IS NOT NULL GROUP BY brand;
--> statement-breakpoint
INSERT INTO model_counts (model, base_products, records)
  SELECT model, sum(parent_id IS NULL), count(*) FROM products WHERE model IS NOT NULL GROUP BY model;
--> statement-breakpoint
INSERT INTO product_type_counts (product_type_id, base_products, components)
  SELECT product_type_id, sum(parent_id IS NULL), sum(parent_id IS NOT NULL) FROM products WHERE product_type_id IS NOT NULL GROUP BY product_type_id;
--> statement-breakpoint
INSERT INTO owner_counts (owner_id, base_products)
  SELECT owner_id, count(*) FROM products WHERE parent_id IS NULL GROUP BY owner_id;
--> statement-breakpoint
-- Distinct brands and models (the totals of suggestions without a prefix), kept by the triggers on their counters.
INSERT INTO catalogue_totals (name, count, mass_g) VALUES
  ('brands', (SELECT count(*) FROM brand_counts), 0),
  ('models', (SELECT count(*) FROM model_counts), 0);
--> statement-breakpoint
INSERT INTO prefix_counts (kind, prefix, value_count)
  SELECT kind, prefix, count(*) FROM (
    SELECT 'brands' AS kind, lower(substr(brand, 1, 1)) AS prefix FROM brand_counts
    UNION ALL SELECT 'brands', lower(substr(brand, 1, 2)) FROM brand_counts WHERE length(brand) >= 2
    UNION ALL SELECT 'models', lower(substr(model, 1, 1)) FROM model_counts
    UNION ALL SELECT 'models', lower(substr(model, 1, 2)) FROM model_counts WHERE length(model) >= 2)
  GROUP BY kind, prefix;
--> statement-breakpoint
INSERT INTO daily_counts (day, teardowns, parts, mass_g)
  SELECT created_at / 86400, sum(parent_id IS NULL), sum(parent_id IS NOT NULL), total(weight_g) FILTER (WHERE parent_id IS NULL)
  FROM products GROUP BY 1;
--> statement-breakpoint
INSERT INTO daily_counts (day, images)
  SELECT created_at / 86400, count(*) FROM images WHERE status = 'clean' GROUP BY 1 HAVING true
  ON CONFLICT (day) DO UPDATE SET images = excluded.images;
--> statement-breakpoint
INSERT INTO daily_counts (day, users_new)
  SELECT created_at / 86400, count(*) FROM users WHERE is_system = 0 GROUP BY 1 HAVING true
  ON CONFLICT (day) DO UPDATE SET users_new = excluded.users_new;
--> statement-breakpoint
CREATE TRIGGER `products_counts_inserted` AFTER INSERT ON `products` BEGIN
  INSERT INTO catalogue_totals (name, count, mass_g) SELECT (CASE WHEN new.parent_id IS NULL THEN 'base_products' ELSE 'components' END), 1, (CASE WHEN new.parent_id IS NULL THEN coalesce(new.weight_g, 0) ELSE 0 END) WHERE 1
    ON CONFLICT (name) DO UPDATE SET count = count + 1, mass_g = mass_g + excluded.mass_g;
  INSERT INTO daily_counts (day, teardowns, parts, mass_g) SELECT (new.created_at / 86400), new.parent_id IS NULL, new.parent_id IS NOT NULL, (CASE WHEN new.parent_id IS NULL THEN coalesce(new.weight_g, 0) ELSE 0 END) WHERE 1
    ON CONFLICT (day) DO UPDATE SET teardowns = teardowns + excluded.teardowns, parts = parts + excluded.parts, mass_g = mass_g + excluded.mass_g;
  INSERT INTO brand_counts (brand, base_products, records) SELECT new.brand, new.parent_id IS NULL, 1 WHERE new.brand IS NOT NULL
    ON CONFLICT (brand) DO UPDATE SET base_products = base_products + excluded.base_products, records = records + 1;
  INSERT INTO model_counts (model, base_products, records) SELECT new.model, new.parent_id IS NULL, 1 WHERE new.model IS NOT NULL
    ON CONFLICT (model) DO UPDATE SET base_products = base_products + excluded.base_products, records = records + 1;
  INSERT INTO product_type_counts (product_type_id, base_products, components) SELECT new.product_type_id, new.parent_id IS NULL, new.parent_id IS NOT NULL
    WHERE new.product_type_id IS NOT NULL
    ON CONFLICT (product_type_id) DO UPDATE SET base_products = base_products + excluded.base_products, components = components + excluded.components;
  INSERT INTO owner_counts (owner_id, base_products) SELECT new.owner_id, 1 WHERE new.parent_id IS NULL
    ON CONFLICT (owner_id) DO UPDATE SET base_products = base_products + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `products_counts_deleted` AFTER DELETE ON `products` BEGIN
  UPDATE catalogue_totals SET count = count - 1, mass_g = CASE WHEN count = 1 THEN 0 ELSE mass_g - (CASE WHEN old.parent_id IS NULL THEN coalesce(old.weight_g, 0) ELSE 0 END) END
    WHERE name = (CASE WHEN old.parent_id IS NULL THEN 'base_products' ELSE 'components' END) AND 1;
  UPDATE daily_counts SET teardowns = teardowns - (old.parent_id IS NULL), parts = parts - (old.parent_id IS NOT NULL),
      mass_g = CASE WHEN teardowns - (old.parent_id IS NULL) = 0 THEN 0 ELSE mass_g - (CASE WHEN old.parent_id IS NULL THEN coalesce(old.weight_g, 0) ELSE 0 END) END
    WHERE day = (old.created_at / 86400) AND 1;
  DELETE FROM daily_counts WHERE day = (old.created_at / 86400) AND teardowns = 0 AND parts = 0 AND images = 0 AND users_new = 0 AND 1;
  UPDATE brand_counts SET base_products = base_products - (old.parent_id IS NULL), records = records - 1 WHERE brand = old.brand;
  DELETE FROM brand_counts WHERE brand = old.brand AND records <= 0;
  UPDATE model_counts SET base_products = base_products - (old.parent_id IS NULL), records = records - 1 WHERE model = old.model;
  DELETE FROM model_counts WHERE model = old.model AND records <= 0;
  UPDATE product_type_counts SET base_products = base_products - (old.parent_id IS NULL), components = components - (old.parent_id IS NOT NULL)
    WHERE product_type_id = old.product_type_id;
  DELETE FROM product_type_counts WHERE product_type_id = old.product_type_id AND base_products <= 0 AND components <= 0;
  UPDATE owner_counts SET base_products = base_products - 1 WHERE owner_id = old.owner_id AND old.parent_id IS NULL;
  DELETE FROM owner_counts WHERE owner_id = old.owner_id AND base_products <= 0;
END;
--> statement-breakpoint
CREATE TRIGGER `products_counts_totals_updated` AFTER UPDATE OF weight_g, parent_id, created_at ON `products` WHEN (old.parent_id IS NULL) IS NOT (new.parent_id IS NULL) OR old.created_at IS NOT new.created_at OR (new.parent_id IS NULL AND old.weight_g IS NOT new.weight_g) BEGIN
  UPDATE catalogue_totals SET count = count - 1, mass_g = CASE WHEN count = 1 THEN 0 ELSE mass_g - (CASE WHEN old.parent_id IS NULL THEN coalesce(old.weight_g, 0) ELSE 0 END) END
    WHERE name = (CASE WHEN old.parent_id IS NULL THEN 'base_products' ELSE 'components' END) AND 1;
  UPDATE daily_counts SET teardowns = teardowns - (old.parent_id IS NULL), parts = parts - (old.parent_id IS NOT NULL),
      mass_g = CASE WHEN teardowns - (old.parent_id IS NULL) = 0 THEN 0 ELSE mass_g - (CASE WHEN old.parent_id IS NULL THEN coalesce(old.weight_g, 0) ELSE 0 END) END
    WHERE day = (old.created_at / 86400) AND 1;
  DELETE FROM daily_counts WHERE day = (old.created_at / 86400) AND teardowns = 0 AND parts = 0 AND images = 0 AND users_new = 0 AND 1;
  INSERT INTO catalogue_totals (name, count, mass_g) SELECT (CASE WHEN new.parent_id IS NULL THEN 'base_products' ELSE 'components' END), 1, (CASE WHEN new.parent_id IS NULL THEN coalesce(new.weight_g, 0) ELSE 0 END) WHERE 1
    ON CONFLICT (name) DO UPDATE SET count = count + 1, mass_g = mass_g + excluded.mass_g;
  INSERT INTO daily_counts (day, teardowns, parts, mass_g) SELECT (new.created_at / 86400), new.parent_id IS NULL, new.parent_id IS NOT NULL, (CASE WHEN new.parent_id IS NULL THEN coalesce(new.weight_g, 0) ELSE 0 END) WHERE 1
    ON CONFLICT (day) DO UPDATE SET teardowns = teardowns + excluded.teardowns, parts = parts + excluded.parts, mass_g = mass_g + excluded.mass_g;
END;
--> statement-breakpoint
CREATE TRIGGER `products_counts_brand_updated` AFTER UPDATE OF brand, parent_id ON `products` WHEN old.brand IS NOT new.brand OR (old.parent_id IS NULL) IS NOT (new.parent_id IS NULL) BEGIN
  UPDATE brand_counts SET base_products = base_products - (old.parent_id IS NULL), records = records - 1 WHERE brand = old.brand;
  DELETE FROM brand_counts WHERE brand = old.brand AND records <= 0;
  INSERT INTO brand_counts (brand, base_products, records) SELECT new.brand, new.parent_id IS NULL, 1 WHERE new.brand IS NOT NULL
    ON CONFLICT (brand) DO UPDATE SET base_products = base_products + excluded.base_products, records = records + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `products_counts_model_updated` AFTER UPDATE OF model, parent_id ON `products` WHEN old.model IS NOT new.model OR (old.parent_id IS NULL) IS NOT (new.parent_id IS NULL) BEGIN
  UPDATE model_counts SET base_products = base_products - (old.parent_id IS NULL), records = records - 1 WHERE model = old.model;
  DELETE FROM model_counts WHERE model = old.model AND records <= 0;
  INSERT INTO model_counts (model, base_products, records) SELECT new.model, new.parent_id IS NULL, 1 WHERE new.model IS NOT NULL
    ON CONFLICT (model) DO UPDATE SET base_products = base_products + excluded.base_products, records = records + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `products_counts_type_updated` AFTER UPDATE OF product_type_id, parent_id ON `products` WHEN old.product_type_id IS NOT new.product_type_id OR (old.parent_id IS NULL) IS NOT (new.parent_id IS NULL) BEGIN
  UPDATE product_type_counts SET base_products = base_products - (old.parent_id IS NULL), components = components - (old.parent_id IS NOT NULL)
    WHERE product_type_id = old.product_type_id;
  DELETE FROM product_type_counts WHERE product_type_id = old.product_type_id AND base_products <= 0 AND components <= 0;
  INSERT INTO product_type_counts (product_type_id, base_products, components) SELECT new.product_type_id, new.parent_id IS NULL, new.parent_id IS NOT NULL
    WHERE new.product_type_id IS NOT NULL
    ON CONFLICT (product_type_id) DO UPDATE SET base_products = base_products + excluded.base_products, components = components + excluded.components;
END;
--> statement-breakpoint
CREATE TRIGGER `products_counts_owner_updated` AFTER UPDATE OF owner_id, parent_id ON `products` WHEN (old.owner_id IS NOT new.owner_id OR (old.parent_id IS NULL) IS NOT (new.parent_id IS NULL)) AND (old.parent_id IS NULL OR new.parent_id IS NULL) BEGIN
  UPDATE owner_counts SET base_products = base_products - 1 WHERE owner_id = old.owner_id AND old.parent_id IS NULL;
  DELETE FROM owner_counts WHERE owner_id = old.owner_id AND base_products <= 0;
  INSERT INTO owner_counts (owner_id, base_products) SELECT new.owner_id, 1 WHERE new.parent_id IS NULL
    ON CONFLICT (owner_id) DO UPDATE SET base_products = base_products + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `users_counts_inserted` AFTER INSERT ON `users` BEGIN
  INSERT INTO catalogue_totals (name, count) SELECT 'active_users', 1 WHERE new.is_active = 1 AND new.is_system = 0
    ON CONFLICT (name) DO UPDATE SET count = count + 1;
  INSERT INTO daily_counts (day, users_new) SELECT (new.created_at / 86400), 1 WHERE new.is_system = 0
    ON CONFLICT (day) DO UPDATE SET users_new = users_new + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `users_counts_deleted` AFTER DELETE ON `users` BEGIN
  UPDATE catalogue_totals SET count = count - 1 WHERE name = 'active_users' AND old.is_active = 1 AND old.is_system = 0;
  UPDATE daily_counts SET users_new = users_new - 1 WHERE day = (old.created_at / 86400) AND old.is_system = 0;
  DELETE FROM daily_counts WHERE day = (old.created_at / 86400) AND teardowns = 0 AND parts = 0 AND images = 0 AND users_new = 0;
END;
--> statement-breakpoint
CREATE TRIGGER `users_counts_updated` AFTER UPDATE OF is_active, is_system, created_at ON `users` WHEN old.is_active IS NOT new.is_active OR old.is_system IS NOT new.is_system OR old.created_at IS NOT new.created_at BEGIN
  UPDATE catalogue_totals SET count = count - 1 WHERE name = 'active_users' AND old.is_active = 1 AND old.is_system = 0;
  UPDATE daily_counts SET users_new = users_new - 1 WHERE day = (old.created_at / 86400) AND old.is_system = 0;
  DELETE FROM daily_counts WHERE day = (old.created_at / 86400) AND teardowns = 0 AND parts = 0 AND images = 0 AND users_new = 0;
  INSERT INTO catalogue_totals (name, count) SELECT 'active_users', 1 WHERE new.is_active = 1 AND new.is_system = 0
    ON CONFLICT (name) DO UPDATE SET count = count + 1;
  INSERT INTO daily_counts (day, users_new) SELECT (new.created_at / 86400), 1 WHERE new.is_system = 0
    ON CONFLICT (day) DO UPDATE SET users_new = users_new + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `images_counts_inserted` AFTER INSERT ON `images` WHEN new.status = 'clean' BEGIN
  INSERT INTO catalogue_totals (name, count) SELECT 'clean_images', 1 WHERE new.status = 'clean'
    ON CONFLICT (name) DO UPDATE SET count = count + 1;
  INSERT INTO daily_counts (day, images) SELECT (new.created_at / 86400), 1 WHERE new.status = 'clean'
    ON CONFLICT (day) DO UPDATE SET images = images + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `images_counts_deleted` AFTER DELETE ON `images` WHEN old.status = 'clean' BEGIN
  UPDATE catalogue_totals SET count = count - 1 WHERE name = 'clean_images' AND old.status = 'clean';
  UPDATE daily_counts SET images = images - 1 WHERE day = (old.created_at / 86400) AND old.status = 'clean';
  DELETE FROM daily_counts WHERE day = (old.created_at / 86400) AND teardowns = 0 AND parts = 0 AND images = 0 AND users_new = 0;
END;
--> statement-breakpoint
CREATE TRIGGER `images_counts_updated` AFTER UPDATE OF status, created_at ON `images` WHEN (old.status = 'clean' OR new.status = 'clean') AND (old.status IS NOT new.status OR old.created_at IS NOT new.created_at) BEGIN
  UPDATE catalogue_totals SET count = count - 1 WHERE name = 'clean_images' AND old.status = 'clean';
  UPDATE daily_counts SET images = images - 1 WHERE day = (old.created_at / 86400) AND old.status = 'clean';
  DELETE FROM daily_counts WHERE day = (old.created_at / 86400) AND teardowns = 0 AND parts = 0 AND images = 0 AND users_new = 0;
  INSERT INTO catalogue_totals (name, count) SELECT 'clean_images', 1 WHERE new.status = 'clean'
    ON CONFLICT (name) DO UPDATE SET count = count + 1;
  INSERT INTO daily_counts (day, images) SELECT (new.created_at / 86400), 1 WHERE new.status = 'clean'
    ON CONFLICT (day) DO UPDATE SET images = images + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `brand_counts_added` AFTER INSERT ON `brand_counts` BEGIN
  UPDATE catalogue_totals SET count = count + 1 WHERE name = 'brands';
  INSERT INTO prefix_counts (kind, prefix, value_count) SELECT 'brands', lower(substr(new.brand, 1, n.n)), 1 FROM (SELECT 1 AS n UNION ALL SELECT 2) n
    WHERE length(new.brand) >= n.n
    ON CONFLICT (kind, prefix) DO UPDATE SET value_count = value_count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `brand_counts_removed` AFTER DELETE ON `brand_counts` BEGIN
  UPDATE catalogue_totals SET count = count - 1 WHERE name = 'brands';
  UPDATE prefix_counts SET value_count = value_count - 1
    WHERE kind = 'brands' AND prefix IN (lower(substr(old.brand, 1, 1)), iif(length(old.brand) >= 2, lower(substr(old.brand, 1, 2)), NULL));
  DELETE FROM prefix_counts WHERE kind = 'brands' AND value_count <= 0;
END;
--> statement-breakpoint
CREATE TRIGGER `model_counts_added` AFTER INSERT ON `model_counts` BEGIN
  UPDATE catalogue_totals SET count = count + 1 WHERE name = 'models';
  INSERT INTO prefix_counts (kind, prefix, value_count) SELECT 'models', lower(substr(new.model, 1, n.n)), 1 FROM (SELECT 1 AS n UNION ALL SELECT 2) n
    WHERE length(new.model) >= n.n
    ON CONFLICT (kind, prefix) DO UPDATE SET value_count = value_count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `model_counts_removed` AFTER DELETE ON `model_counts` BEGIN
  UPDATE catalogue_totals SET count = count - 1 WHERE name = 'models';
  UPDATE prefix_counts SET value_count = value_count - 1
    WHERE kind = 'models' AND prefix IN (lower(substr(old.model, 1, 1)), iif(length(old.model) >= 2, lower(substr(old.model, 1, 2)), NULL));
  DELETE FROM prefix_counts WHERE kind = 'models' AND value_count <= 0;
END;
