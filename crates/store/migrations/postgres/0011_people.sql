-- People, PostgreSQL flavour (twin: migrations/sqlite/0011_people.sql).
--
-- A user can be deactivated without being removed: its tokens stop authenticating at once (the
-- token lookup joins the user and reads this flag and the role on every request) and come back
-- when it is reactivated. Existing users stay active.
ALTER TABLE users ADD COLUMN active BOOLEAN NOT NULL DEFAULT TRUE;
