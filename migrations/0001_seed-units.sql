-- Units of bill-of-materials quantities. Part of the data model rather than optional starter
-- data: every quantity names one of these, and to_base converts it to kilograms or metres.
INSERT INTO `units` (`code`, `name`, `dimension`, `to_base`, `position`) VALUES
  ('kg', 'kilogram', 'mass', 1, 1),
  ('g', 'gram', 'mass', 0.001, 2),
  ('m', 'metre', 'length', 1, 3),
  ('cm', 'centimetre', 'length', 0.01, 4)
ON CONFLICT (`code`) DO NOTHING;
