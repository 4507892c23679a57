-- A rename or a change of profile visibility renewed the tree generation of every base product the
-- account owned (migration 0025's `users_read_updated`): one statement that read every record of the
-- account and wrote a row per tree, so it grew with the account (3.2 s in the request that closes an
-- account of 5,000 base products at 30,000 products, issue 30). Record reads now validate against a
-- generation of their own for owners' names (src/services/caching/read-copies.ts), renewed in one row:
-- after a rename every cached record read misses once, as after a change of reference names. A tree
-- may hold records of more than one owner (a superuser adds a component to someone's product), so
-- one generation for all owners, not one per account.
INSERT INTO read_generations (name, generation) VALUES ('owners', random());--> statement-breakpoint
DROP TRIGGER `users_read_updated`;--> statement-breakpoint
CREATE TRIGGER `users_read_updated` AFTER UPDATE OF username, profile_visibility ON `users` BEGIN
  UPDATE read_generations SET generation = random() WHERE name IN ('catalogue', 'owners');
END;
