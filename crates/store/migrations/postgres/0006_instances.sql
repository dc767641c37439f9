-- Replicas, PostgreSQL flavour (twin: migrations/sqlite/0006_instances.sql).
--
-- Every Switchboard process registers an instance and keeps it alive with heartbeats
-- (`alive_until` moves forward each time). Rows that belong to an answer running in one
-- process (pending approval and elicitation requests, tool calls, the answer in flight of a
-- conversation) carry that process's `instance_id`: start-up recovery and the periodic sweep
-- only touch rows whose instance is not alive (row gone or `alive_until` passed). Rows from
-- before this migration have no instance and count as dead.

CREATE TABLE instances (
    id TEXT PRIMARY KEY NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    heartbeat_at TIMESTAMPTZ NOT NULL,
    alive_until TIMESTAMPTZ NOT NULL
);

ALTER TABLE tool_calls ADD COLUMN instance_id TEXT;
ALTER TABLE approval_requests ADD COLUMN instance_id TEXT;
ALTER TABLE elicitation_requests ADD COLUMN instance_id TEXT;

-- At most one answer in flight per conversation, across replicas.
CREATE TABLE conversation_answers (
    conversation_id TEXT PRIMARY KEY NOT NULL,
    workspace_id TEXT NOT NULL,
    answer_id TEXT NOT NULL,
    instance_id TEXT,
    started_at TIMESTAMPTZ NOT NULL,
    FOREIGN KEY (workspace_id, conversation_id) REFERENCES conversations (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX conversation_answers_by_workspace ON conversation_answers (workspace_id);
