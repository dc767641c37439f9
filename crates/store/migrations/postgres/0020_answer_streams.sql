-- Live answers across replicas, postgres flavour (twin: migrations/sqlite/0020_answer_streams.sql).
--
-- Every event of an answer in flight, in order (issue 18): the replica running the answer
-- appends them (a batch per transaction) and announces the last sequence number with
-- `NOTIFY switchboard_answer_streams, '<answer id>:<seq>'`; a replica whose client follows the
-- conversation (`GET /chat/{id}/stream`) reads them from its first event. Keyed by the
-- answer's claim (`conversation_answers.answer_id`), so a later answer never mixes with an
-- earlier one. Written on PostgreSQL only (SQLite is one process); pruned shortly after the
-- answer ended, and with the conversation's next answer.
CREATE TABLE answer_stream_events (
    answer_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    conversation_id TEXT NOT NULL,
    event TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (answer_id, seq)
);
CREATE INDEX answer_stream_events_by_conversation ON answer_stream_events (conversation_id);
