-- MCP Apps' model context, PostgreSQL flavour (twin: migrations/sqlite/0017_app_model_contexts.sql).
--
-- What an app shown under a tool call last sent with `ui/update-model-context` (issue 12): one
-- row per tool call, replaced by each update (the spec: each update overwrites the previous),
-- given to the model with that call's result on the conversation's next turns. `context` is
-- the validated JSON `{"content": [...], "structuredContent": {...}}`. Gone with its call and
-- its conversation.
CREATE TABLE app_model_contexts (
    tool_call_id TEXT PRIMARY KEY NOT NULL REFERENCES tool_calls (id) ON DELETE CASCADE,
    workspace_id TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    context JSONB NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    FOREIGN KEY (workspace_id, conversation_id) REFERENCES conversations (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX app_model_contexts_by_conversation ON app_model_contexts (workspace_id, conversation_id);
