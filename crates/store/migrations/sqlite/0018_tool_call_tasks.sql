-- Tool calls that became tasks, SQLite flavour (twin: migrations/postgres/0018_tool_call_tasks.sql).
--
-- An upstream may answer `tools/call` with a task (the MCP tasks extension) that the host then
-- polls. Its id is kept with the call's row while the call is `dispatched`, so a restarted host
-- follows the same task (start-up recovery leaves such a call `dispatched` instead of marking it
-- `unknown`) and the tool is never run again.
ALTER TABLE tool_calls ADD COLUMN task_id TEXT;
