-- `name[ilike]` and `model[ilike]` compare `lower()`ed text (src/services/products/query.ts). The
-- trigram index of migration 0024 folds case itself (`case_sensitive 0`, every letter with a case),
-- so its matches are a superset and each had to be read from `products` and tested: the total of
-- `name[ilike]=pro` read a row per match (issue 30). `products_trigram_lower` indexes the
-- `lower()`ed values, case as is, through a view: a trigram phrase matches exactly the values the
-- test matches, and a count reads the index alone. `products_trigram` stays, kept by its triggers,
-- for the code a deploy replaces or a rollback returns to (docs/operations.md "Deploying"); a later
-- migration drops it.
CREATE VIEW `products_trigram_lower_source` AS SELECT id, lower(name) AS name, lower(model) AS model FROM products;--> statement-breakpoint
CREATE VIRTUAL TABLE `products_trigram_lower` USING fts5(name, model, content='products_trigram_lower_source', content_rowid='id', tokenize='trigram case_sensitive 1');--> statement-breakpoint
INSERT INTO products_trigram_lower (rowid, name, model) SELECT id, lower(name), lower(model) FROM products WHERE parent_id IS NULL;--> statement-breakpoint
CREATE TRIGGER `products_trigram_lower_after_insert` AFTER INSERT ON `products` WHEN new.parent_id IS NULL BEGIN
  INSERT INTO products_trigram_lower (rowid, name, model) VALUES (new.id, lower(new.name), lower(new.model));
END;--> statement-breakpoint
CREATE TRIGGER `products_trigram_lower_after_delete` AFTER DELETE ON `products` WHEN old.parent_id IS NULL BEGIN
  INSERT INTO products_trigram_lower (products_trigram_lower, rowid, name, model) VALUES ('delete', old.id, lower(old.name), lower(old.model));
END;--> statement-breakpoint
CREATE TRIGGER `products_trigram_lower_after_update` AFTER UPDATE OF name, model, parent_id ON `products` WHEN old.parent_id IS NULL OR new.parent_id IS NULL BEGIN
  INSERT INTO products_trigram_lower (products_trigram_lower, rowid, name, model) SELECT 'delete', old.id, lower(old.name), lower(old.model) WHERE old.parent_id IS NULL;
  INSERT INTO products_trigram_lower (rowid, name, model) SELECT new.id, lower(new.name), lower(new.model) WHERE new.parent_id IS NULL;
END;--> statement-breakpoint
-- One or two characters make no trigram, so they read every base product's value (600,011 rows and
-- 0.4-0.6 s of D1 time at 300,000 base products). Where such text occurs in a value, either a
-- trigram of the value starts with it, or it lies in the value's last two characters. The first is
-- found in `products_trigram_lower_terms` (a read-only view of the new trigram index's terms with their
-- documents and columns, in which the terms that start with the text sit together), the second in
-- these indexes of the last one or two characters. Both read about as many rows as there are
-- matches (docs/product-list.md "Plans").
CREATE INDEX `products_base_name_end_idx` ON `products` (lower(substr("name", -2))) WHERE "products"."parent_id" IS NULL;--> statement-breakpoint
CREATE INDEX `products_base_name_last_idx` ON `products` (lower(substr("name", -1))) WHERE "products"."parent_id" IS NULL;--> statement-breakpoint
CREATE INDEX `products_base_model_end_idx` ON `products` (lower(substr("model", -2))) WHERE "products"."parent_id" IS NULL;--> statement-breakpoint
CREATE INDEX `products_base_model_last_idx` ON `products` (lower(substr("model", -1))) WHERE "products"."parent_id" IS NULL;--> statement-breakpoint
CREATE VIRTUAL TABLE `products_trigram_lower_terms` USING fts5vocab(products_trigram_lower, 'instance');
