CREATE TABLE `quality_counts` (
	`base` integer NOT NULL,
	`profile` text NOT NULL,
	`records` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`base`, `profile`)
);
--> statement-breakpoint
ALTER TABLE `products` ADD `component_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `products` ADD `unweighed_component_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `products` ADD `components_mass_g` real;--> statement-breakpoint
ALTER TABLE `products` ADD `bom_entry_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `products` ADD `bom_mass_entry_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `products` ADD `bom_mass_g` real;--> statement-breakpoint
ALTER TABLE `products` ADD `clean_image_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `products` ADD `check_has_product_type` integer GENERATED ALWAYS AS (CASE WHEN parent_id IS NULL THEN product_type_id IS NOT NULL END) VIRTUAL;--> statement-breakpoint
ALTER TABLE `products` ADD `check_has_weight` integer GENERATED ALWAYS AS (weight_g IS NOT NULL) VIRTUAL;--> statement-breakpoint
ALTER TABLE `products` ADD `check_has_dimensions` integer GENERATED ALWAYS AS (height_cm IS NOT NULL AND width_cm IS NOT NULL AND depth_cm IS NOT NULL) VIRTUAL;--> statement-breakpoint
ALTER TABLE `products` ADD `check_has_image` integer GENERATED ALWAYS AS (clean_image_count > 0) VIRTUAL;--> statement-breakpoint
ALTER TABLE `products` ADD `check_has_breakdown` integer GENERATED ALWAYS AS (component_count > 0 OR bom_entry_count > 0) VIRTUAL;--> statement-breakpoint
ALTER TABLE `products` ADD `check_components_mass_balance` integer GENERATED ALWAYS AS (CASE WHEN weight_g IS NOT NULL AND component_count > 0 AND unweighed_component_count = 0 THEN abs(components_mass_g - weight_g) <= 0.1 * weight_g END) VIRTUAL;--> statement-breakpoint
ALTER TABLE `products` ADD `check_materials_mass_balance` integer GENERATED ALWAYS AS (CASE WHEN weight_g IS NOT NULL AND bom_mass_entry_count > 0 THEN abs(bom_mass_g - weight_g) <= 0.1 * weight_g END) VIRTUAL;--> statement-breakpoint
ALTER TABLE `products` ADD `check_density_plausible` integer GENERATED ALWAYS AS (CASE WHEN weight_g IS NOT NULL AND height_cm IS NOT NULL AND width_cm IS NOT NULL AND depth_cm IS NOT NULL THEN weight_g / (height_cm * width_cm * depth_cm) BETWEEN 0.005 AND 25 END) VIRTUAL;--> statement-breakpoint
ALTER TABLE `products` ADD `check_has_circularity_notes` integer GENERATED ALWAYS AS (CASE WHEN parent_id IS NULL THEN circularity_properties IS NOT NULL END) VIRTUAL;--> statement-breakpoint
ALTER TABLE `products` ADD `quality_score` real GENERATED ALWAYS AS (CASE WHEN (check_has_product_type IS NOT NULL) + (check_has_weight IS NOT NULL) + (check_has_dimensions IS NOT NULL) + (check_has_image IS NOT NULL) + (check_has_breakdown IS NOT NULL) + (check_components_mass_balance IS NOT NULL) + (check_materials_mass_balance IS NOT NULL) + (check_density_plausible IS NOT NULL) + (check_has_circularity_notes IS NOT NULL) = 0 THEN 1.0 ELSE round(CAST(coalesce(check_has_product_type, 0) + coalesce(check_has_weight, 0) + coalesce(check_has_dimensions, 0) + coalesce(check_has_image, 0) + coalesce(check_has_breakdown, 0) + coalesce(check_components_mass_balance, 0) + coalesce(check_materials_mass_balance, 0) + coalesce(check_density_plausible, 0) + coalesce(check_has_circularity_notes, 0) AS REAL) / ((check_has_product_type IS NOT NULL) + (check_has_weight IS NOT NULL) + (check_has_dimensions IS NOT NULL) + (check_has_image IS NOT NULL) + (check_has_breakdown IS NOT NULL) + (check_components_mass_balance IS NOT NULL) + (check_materials_mass_balance IS NOT NULL) + (check_density_plausible IS NOT NULL) + (check_has_circularity_notes IS NOT NULL)), 3) END) VIRTUAL;--> statement-breakpoint
ALTER TABLE `release_records` ADD `quality_score` real;--> statement-breakpoint
ALTER TABLE `release_records` ADD `check_has_product_type` integer;--> statement-breakpoint
ALTER TABLE `release_records` ADD `check_has_weight` integer;--> statement-breakpoint
ALTER TABLE `release_records` ADD `check_has_dimensions` integer;--> statement-breakpoint
ALTER TABLE `release_records` ADD `check_has_image` integer;--> statement-breakpoint
ALTER TABLE `release_records` ADD `check_has_breakdown` integer;--> statement-breakpoint
ALTER TABLE `release_records` ADD `check_components_mass_balance` integer;--> statement-breakpoint
ALTER TABLE `release_records` ADD `check_materials_mass_balance` integer;--> statement-breakpoint
ALTER TABLE `release_records` ADD `check_density_plausible` integer;--> statement-breakpoint
ALTER TABLE `release_records` ADD `check_has_circularity_notes` integer;--> statement-breakpoint
-- Record quality (docs/quality.md). The checks are generated columns over the record's own fields and
-- seven counts and sums of its neighbours kept on it: direct components (how many, how many without a
-- weight, their weight x amount), bill-of-materials entries (how many, how many in kg or g, those in
-- grams) and clean images. The triggers below recompute a record's counts from scratch (never by adding
-- and subtracting, which would drift) inside the transaction of every write that changes them, so every
-- read, list filter and statistic sees them current. The same subqueries fill them for the existing rows
-- first: set-based statements, each record's counts read through the indexes of its neighbours, a
-- quarter of the records each, so that no statement runs long on a large dataset.
UPDATE products SET
  (component_count, unweighed_component_count, components_mass_g) =
    (SELECT count(*), count(*) - count(c.weight_g), sum(c.weight_g * c.amount_in_parent) FROM products c WHERE c.parent_id = products.id),
  (bom_entry_count, bom_mass_entry_count, bom_mass_g) =
    (SELECT count(*), count(CASE b.unit WHEN 'kg' THEN 1 WHEN 'g' THEN 1 END), sum(CASE b.unit WHEN 'kg' THEN b.quantity * 1000 WHEN 'g' THEN b.quantity END)
      FROM bill_of_materials b WHERE b.product_id = products.id),
  clean_image_count = (SELECT count(*) FROM images i WHERE i.product_id = products.id AND i.status = 'clean')
WHERE id % 4 = 0 AND (
  EXISTS (SELECT 1 FROM products c WHERE c.parent_id = products.id)
  OR EXISTS (SELECT 1 FROM bill_of_materials b WHERE b.product_id = products.id)
  OR EXISTS (SELECT 1 FROM images i WHERE i.product_id = products.id AND i.status = 'clean'));--> statement-breakpoint
UPDATE products SET
  (component_count, unweighed_component_count, components_mass_g) =
    (SELECT count(*), count(*) - count(c.weight_g), sum(c.weight_g * c.amount_in_parent) FROM products c WHERE c.parent_id = products.id),
  (bom_entry_count, bom_mass_entry_count, bom_mass_g) =
    (SELECT count(*), count(CASE b.unit WHEN 'kg' THEN 1 WHEN 'g' THEN 1 END), sum(CASE b.unit WHEN 'kg' THEN b.quantity * 1000 WHEN 'g' THEN b.quantity END)
      FROM bill_of_materials b WHERE b.product_id = products.id),
  clean_image_count = (SELECT count(*) FROM images i WHERE i.product_id = products.id AND i.status = 'clean')
WHERE id % 4 = 1 AND (
  EXISTS (SELECT 1 FROM products c WHERE c.parent_id = products.id)
  OR EXISTS (SELECT 1 FROM bill_of_materials b WHERE b.product_id = products.id)
  OR EXISTS (SELECT 1 FROM images i WHERE i.product_id = products.id AND i.status = 'clean'));--> statement-breakpoint
UPDATE products SET
  (component_count, unweighed_component_count, components_mass_g) =
    (SELECT count(*), count(*) - count(c.weight_g), sum(c.weight_g * c.amount_in_parent) FROM products c WHERE c.parent_id = products.id),
  (bom_entry_count, bom_mass_entry_count, bom_mass_g) =
    (SELECT count(*), count(CASE b.unit WHEN 'kg' THEN 1 WHEN 'g' THEN 1 END), sum(CASE b.unit WHEN 'kg' THEN b.quantity * 1000 WHEN 'g' THEN b.quantity END)
      FROM bill_of_materials b WHERE b.product_id = products.id),
  clean_image_count = (SELECT count(*) FROM images i WHERE i.product_id = products.id AND i.status = 'clean')
WHERE id % 4 = 2 AND (
  EXISTS (SELECT 1 FROM products c WHERE c.parent_id = products.id)
  OR EXISTS (SELECT 1 FROM bill_of_materials b WHERE b.product_id = products.id)
  OR EXISTS (SELECT 1 FROM images i WHERE i.product_id = products.id AND i.status = 'clean'));--> statement-breakpoint
UPDATE products SET
  (component_count, unweighed_component_count, components_mass_g) =
    (SELECT count(*), count(*) - count(c.weight_g), sum(c.weight_g * c.amount_in_parent) FROM products c WHERE c.parent_id = products.id),
  (bom_entry_count, bom_mass_entry_count, bom_mass_g) =
    (SELECT count(*), count(CASE b.unit WHEN 'kg' THEN 1 WHEN 'g' THEN 1 END), sum(CASE b.unit WHEN 'kg' THEN b.quantity * 1000 WHEN 'g' THEN b.quantity END)
      FROM bill_of_materials b WHERE b.product_id = products.id),
  clean_image_count = (SELECT count(*) FROM images i WHERE i.product_id = products.id AND i.status = 'clean')
WHERE id % 4 = 3 AND (
  EXISTS (SELECT 1 FROM products c WHERE c.parent_id = products.id)
  OR EXISTS (SELECT 1 FROM bill_of_materials b WHERE b.product_id = products.id)
  OR EXISTS (SELECT 1 FROM images i WHERE i.product_id = products.id AND i.status = 'clean'));--> statement-breakpoint
CREATE INDEX `products_base_quality_idx` ON `products` (`quality_score`,`created_at`) WHERE "products"."parent_id" IS NULL;--> statement-breakpoint
-- Every cached read made before this migration lacks `quality_score`: none may be served again.
UPDATE read_generations SET generation = random();--> statement-breakpoint
-- A new record: its parent has one component more. Its own counts are read too, for rows inserted
-- below it earlier in the same statement (the API never does; a bulk load may).
CREATE TRIGGER `products_quality_inserted` AFTER INSERT ON `products` BEGIN
  UPDATE products SET (component_count, unweighed_component_count, components_mass_g) =
    (SELECT count(*), count(*) - count(c.weight_g), sum(c.weight_g * c.amount_in_parent) FROM products c WHERE c.parent_id = new.id)
    WHERE id = new.id AND EXISTS (SELECT 1 FROM products c WHERE c.parent_id = new.id);
  UPDATE products SET (component_count, unweighed_component_count, components_mass_g) =
    (SELECT count(*), count(*) - count(c.weight_g), sum(c.weight_g * c.amount_in_parent) FROM products c WHERE c.parent_id = new.parent_id)
    WHERE id = new.parent_id;
END;--> statement-breakpoint
-- A component re-weighed, its amount changed, or moved: the parents' sums (old and new parent).
CREATE TRIGGER `products_quality_updated` AFTER UPDATE OF weight_g, amount_in_parent, parent_id ON `products`
  WHEN new.parent_id IS NOT NULL OR old.parent_id IS NOT NULL BEGIN
  UPDATE products SET (component_count, unweighed_component_count, components_mass_g) =
    (SELECT count(*), count(*) - count(c.weight_g), sum(c.weight_g * c.amount_in_parent) FROM products c WHERE c.parent_id = new.parent_id)
    WHERE id = new.parent_id;
  UPDATE products SET (component_count, unweighed_component_count, components_mass_g) =
    (SELECT count(*), count(*) - count(c.weight_g), sum(c.weight_g * c.amount_in_parent) FROM products c WHERE c.parent_id = old.parent_id)
    WHERE id = old.parent_id AND old.parent_id IS NOT new.parent_id;
END;--> statement-breakpoint
CREATE TRIGGER `products_quality_deleted` AFTER DELETE ON `products` WHEN old.parent_id IS NOT NULL BEGIN
  UPDATE products SET (component_count, unweighed_component_count, components_mass_g) =
    (SELECT count(*), count(*) - count(c.weight_g), sum(c.weight_g * c.amount_in_parent) FROM products c WHERE c.parent_id = old.parent_id)
    WHERE id = old.parent_id;
END;--> statement-breakpoint
CREATE TRIGGER `bill_of_materials_quality_inserted` AFTER INSERT ON `bill_of_materials` BEGIN
  UPDATE products SET (bom_entry_count, bom_mass_entry_count, bom_mass_g) =
    (SELECT count(*), count(CASE b.unit WHEN 'kg' THEN 1 WHEN 'g' THEN 1 END), sum(CASE b.unit WHEN 'kg' THEN b.quantity * 1000 WHEN 'g' THEN b.quantity END)
      FROM bill_of_materials b WHERE b.product_id = new.product_id)
    WHERE id = new.product_id;
END;--> statement-breakpoint
CREATE TRIGGER `bill_of_materials_quality_updated` AFTER UPDATE ON `bill_of_materials` BEGIN
  UPDATE products SET (bom_entry_count, bom_mass_entry_count, bom_mass_g) =
    (SELECT count(*), count(CASE b.unit WHEN 'kg' THEN 1 WHEN 'g' THEN 1 END), sum(CASE b.unit WHEN 'kg' THEN b.quantity * 1000 WHEN 'g' THEN b.quantity END)
      FROM bill_of_materials b WHERE b.product_id = new.product_id)
    WHERE id = new.product_id;
  UPDATE products SET (bom_entry_count, bom_mass_entry_count, bom_mass_g) =
    (SELECT count(*), count(CASE b.unit WHEN 'kg' THEN 1 WHEN 'g' THEN 1 END), sum(CASE b.unit WHEN 'kg' THEN b.quantity * 1000 WHEN 'g' THEN b.quantity END)
      FROM bill_of_materials b WHERE b.product_id = old.product_id)
    WHERE id = old.product_id AND old.product_id IS NOT new.product_id;
END;--> statement-breakpoint
CREATE TRIGGER `bill_of_materials_quality_deleted` AFTER DELETE ON `bill_of_materials` BEGIN
  UPDATE products SET (bom_entry_count, bom_mass_entry_count, bom_mass_g) =
    (SELECT count(*), count(CASE b.unit WHEN 'kg' THEN 1 WHEN 'g' THEN 1 END), sum(CASE b.unit WHEN 'kg' THEN b.quantity * 1000 WHEN 'g' THEN b.quantity END)
      FROM bill_of_materials b WHERE b.product_id = old.product_id)
    WHERE id = old.product_id;
END;--> statement-breakpoint
-- Images count once clean: an upload (pending) changes nothing until the media job settles it.
CREATE TRIGGER `images_quality_inserted` AFTER INSERT ON `images` WHEN new.status = 'clean' BEGIN
  UPDATE products SET clean_image_count = (SELECT count(*) FROM images i WHERE i.product_id = new.product_id AND i.status = 'clean')
    WHERE id = new.product_id;
END;--> statement-breakpoint
CREATE TRIGGER `images_quality_updated` AFTER UPDATE OF status, product_id ON `images`
  WHEN new.status = 'clean' OR old.status = 'clean' BEGIN
  UPDATE products SET clean_image_count = (SELECT count(*) FROM images i WHERE i.product_id = new.product_id AND i.status = 'clean')
    WHERE id = new.product_id;
  UPDATE products SET clean_image_count = (SELECT count(*) FROM images i WHERE i.product_id = old.product_id AND i.status = 'clean')
    WHERE id = old.product_id AND old.product_id IS NOT new.product_id;
END;--> statement-breakpoint
CREATE TRIGGER `images_quality_deleted` AFTER DELETE ON `images` WHEN old.status = 'clean' BEGIN
  UPDATE products SET clean_image_count = (SELECT count(*) FROM images i WHERE i.product_id = old.product_id AND i.status = 'clean')
    WHERE id = old.product_id;
END;--> statement-breakpoint
-- The dataset's quality (GET /v1/stats/quality), counted as it changes rather than by a scan of every
-- record per request: per kind of record (base = 1 for base products, 0 for components) and quality
-- profile (each check as `p`ass, `f`ail or `-` not applicable, in the order of docs/quality.md, then
-- `:` and the score's decile 0..10), how many records have it. A record is in exactly one row, so a
-- write moves it with two row updates at most. Kept by the triggers below in the transaction of
-- every write that changes a record's checks or score. Filled for the existing records first, in
-- four passes (each groups a quarter of the records), so that no statement runs long.
INSERT INTO quality_counts (base, profile, records)
  SELECT parent_id IS NULL, CASE check_has_product_type WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_weight WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_dimensions WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_image WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_breakdown WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_components_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_materials_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_density_plausible WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_circularity_notes WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || ':' || min(CAST(round(quality_score * 1000) AS INTEGER) / 100, 10), count(*) FROM products WHERE id % 4 = 0 GROUP BY 1, 2
  ON CONFLICT (base, profile) DO UPDATE SET records = records + excluded.records;--> statement-breakpoint
INSERT INTO quality_counts (base, profile, records)
  SELECT parent_id IS NULL, CASE check_has_product_type WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_weight WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_dimensions WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_image WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_breakdown WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_components_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_materials_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_density_plausible WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_circularity_notes WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || ':' || min(CAST(round(quality_score * 1000) AS INTEGER) / 100, 10), count(*) FROM products WHERE id % 4 = 1 GROUP BY 1, 2
  ON CONFLICT (base, profile) DO UPDATE SET records = records + excluded.records;--> statement-breakpoint
INSERT INTO quality_counts (base, profile, records)
  SELECT parent_id IS NULL, CASE check_has_product_type WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_weight WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_dimensions WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_image WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_breakdown WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_components_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_materials_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_density_plausible WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_circularity_notes WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || ':' || min(CAST(round(quality_score * 1000) AS INTEGER) / 100, 10), count(*) FROM products WHERE id % 4 = 2 GROUP BY 1, 2
  ON CONFLICT (base, profile) DO UPDATE SET records = records + excluded.records;--> statement-breakpoint
INSERT INTO quality_counts (base, profile, records)
  SELECT parent_id IS NULL, CASE check_has_product_type WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_weight WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_dimensions WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_image WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_breakdown WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_components_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_materials_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_density_plausible WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE check_has_circularity_notes WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || ':' || min(CAST(round(quality_score * 1000) AS INTEGER) / 100, 10), count(*) FROM products WHERE id % 4 = 3 GROUP BY 1, 2
  ON CONFLICT (base, profile) DO UPDATE SET records = records + excluded.records;--> statement-breakpoint
CREATE TRIGGER `products_quality_counts_inserted` AFTER INSERT ON `products` BEGIN
  INSERT INTO quality_counts (base, profile, records) VALUES (new.parent_id IS NULL, ( CASE new.check_has_product_type WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_weight WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_dimensions WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_image WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_breakdown WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_components_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_materials_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_density_plausible WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_circularity_notes WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || ':' || min(CAST(round(new.quality_score * 1000) AS INTEGER) / 100, 10)), 1)
    ON CONFLICT (base, profile) DO UPDATE SET records = records + 1;
END;--> statement-breakpoint
CREATE TRIGGER `products_quality_counts_deleted` AFTER DELETE ON `products` BEGIN
  UPDATE quality_counts SET records = records - 1 WHERE base = (old.parent_id IS NULL) AND profile = ( CASE old.check_has_product_type WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_weight WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_dimensions WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_image WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_breakdown WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_components_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_materials_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_density_plausible WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_circularity_notes WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || ':' || min(CAST(round(old.quality_score * 1000) AS INTEGER) / 100, 10));
END;--> statement-breakpoint
-- A change of what the checks read that moves the record to another profile (or kind).
CREATE TRIGGER `products_quality_counts_updated` AFTER UPDATE OF parent_id, product_type_id, weight_g, height_cm, width_cm, depth_cm, circularity_properties, component_count, unweighed_component_count, components_mass_g, bom_entry_count, bom_mass_entry_count, bom_mass_g, clean_image_count ON `products`
  WHEN (old.parent_id IS NULL) IS NOT (new.parent_id IS NULL) OR ( CASE old.check_has_product_type WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_weight WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_dimensions WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_image WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_breakdown WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_components_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_materials_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_density_plausible WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_circularity_notes WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || ':' || min(CAST(round(old.quality_score * 1000) AS INTEGER) / 100, 10)) IS NOT ( CASE new.check_has_product_type WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_weight WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_dimensions WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_image WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_breakdown WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_components_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_materials_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_density_plausible WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_circularity_notes WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || ':' || min(CAST(round(new.quality_score * 1000) AS INTEGER) / 100, 10)) BEGIN
  UPDATE quality_counts SET records = records - 1 WHERE base = (old.parent_id IS NULL) AND profile = ( CASE old.check_has_product_type WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_weight WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_dimensions WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_image WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_breakdown WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_components_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_materials_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_density_plausible WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE old.check_has_circularity_notes WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || ':' || min(CAST(round(old.quality_score * 1000) AS INTEGER) / 100, 10));
  INSERT INTO quality_counts (base, profile, records) VALUES (new.parent_id IS NULL, ( CASE new.check_has_product_type WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_weight WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_dimensions WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_image WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_breakdown WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_components_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_materials_mass_balance WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_density_plausible WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || CASE new.check_has_circularity_notes WHEN 1 THEN 'p' WHEN 0 THEN 'f' ELSE '-' END || ':' || min(CAST(round(new.quality_score * 1000) AS INTEGER) / 100, 10)), 1)
    ON CONFLICT (base, profile) DO UPDATE SET records = records + 1;
END;
