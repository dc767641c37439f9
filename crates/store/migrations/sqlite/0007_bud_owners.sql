-- Bud owners, SQLite flavour (twin: migrations/postgres/0007_bud_owners.sql).
--
-- A bud belongs to the user who created it: only that user or an admin may change or delete
-- it (its system prompt shapes every conversation started from it). Buds from before this
-- migration have no owner and can be changed by admins only.

ALTER TABLE buds ADD COLUMN owner_user_id TEXT;
