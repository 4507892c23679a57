-- `name[ilike]` and `model[ilike]` of one or two characters make no trigram, so they read every
-- base product's value (issue 30: 600,011 rows and 0.4-0.6 s of D1 time at 300,000 base products).
-- Where such text occurs in a value, either a trigram of the value starts with it, or it lies in the
-- value's last two characters. The first is found in `products_trigram_terms` (a read-only view of
-- the trigram index's terms, their documents and columns: the terms that start with the text sit
-- together), the second in these indexes of the last one or two characters. Both read about as many
-- rows as there are matches (src/services/products/query.ts, docs/product-list.md "Plans").
CREATE INDEX `products_base_name_end_idx` ON `products` (lower(substr("name", -2))) WHERE "products"."parent_id" IS NULL;--> statement-breakpoint
CREATE INDEX `products_base_name_last_idx` ON `products` (lower(substr("name", -1))) WHERE "products"."parent_id" IS NULL;--> statement-breakpoint
CREATE INDEX `products_base_model_end_idx` ON `products` (lower(substr("model", -2))) WHERE "products"."parent_id" IS NULL;--> statement-breakpoint
CREATE INDEX `products_base_model_last_idx` ON `products` (lower(substr("model", -1))) WHERE "products"."parent_id" IS NULL;--> statement-breakpoint
CREATE VIRTUAL TABLE `products_trigram_terms` USING fts5vocab(products_trigram, 'instance');
