-- Each workspace's knowledge-graph generation, PostgreSQL flavour (twin:
-- migrations/sqlite/0024_kg_generations.sql).
--
-- Every process keeps a workspace's graph in memory. Replicas on one PostgreSQL database must
-- see each other's changes: every change moves the generation on in the transaction that
-- stores it, and only from the generation its writer's graph was planned against (a writer
-- behind another replica's change reloads the graph and plans again). A reader whose graph is
-- behind the stored generation reloads it first. No row: generation 0 (a graph stored before
-- this migration, or none yet).
CREATE TABLE kg_generations (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    generation BIGINT NOT NULL
);
