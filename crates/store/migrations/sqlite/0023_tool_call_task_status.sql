-- The latest status of a tool call's task, and a cancel asked of it, SQLite flavour (twin: migrations/postgres/0023_tool_call_task_status.sql).
--
-- A call that became an upstream task (migration 0018) keeps, besides the task's id, what its
-- server last said of it: the status (`working`, `input_required`…), the `statusMessage`
-- meant for people, and when the host heard it. A page opened later, or after the host
-- restarted, shows the task as it was last reported instead of a bare "working". NULL until
-- the first report (and for calls that are not tasks).
ALTER TABLE tool_calls ADD COLUMN task_status TEXT;
ALTER TABLE tool_calls ADD COLUMN task_status_message TEXT;
ALTER TABLE tool_calls ADD COLUMN task_updated_at TEXT;
--
-- A person may cancel a task another process follows (another replica, or the next process
-- after a restart): the request is stored here, and the process following the call, which
-- looks for requests on the calls it follows every second, sends `tasks/cancel`. NULL when
-- none was asked.
ALTER TABLE tool_calls ADD COLUMN task_cancel_requested_at TEXT;
