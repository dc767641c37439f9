-- The latest status of a tool call's task, SQLite flavour (twin: migrations/postgres/0023_tool_call_task_status.sql).
--
-- A call that became an upstream task (migration 0018) keeps, besides the task's id, what its
-- server last said of it: the status (`working`, `input_required`…), the `statusMessage`
-- meant for people, and when the host heard it. A page opened later, or after the host
-- restarted, shows the task as it was last reported instead of a bare "working". NULL until
-- the first report (and for calls that are not tasks).
ALTER TABLE tool_calls ADD COLUMN task_status TEXT;
ALTER TABLE tool_calls ADD COLUMN task_status_message TEXT;
ALTER TABLE tool_calls ADD COLUMN task_updated_at TEXT;
