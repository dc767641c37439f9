-- Named LLM providers, SQLite flavour (twin: migrations/postgres/0009_llm_providers.sql).
--
-- Providers an admin adds through the API (issue 13), per workspace, by name. The providers of
-- the configuration file are not stored here (they are read from the file at start-up). The
-- API key is stored only AES-256-GCM sealed, bound by associated data to (workspace, name);
-- `models` is a JSON array of {id, context_window, supports_images, supports_tools}.
CREATE TABLE llm_providers (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    base_url TEXT NOT NULL,
    api_key_ciphertext BLOB,
    default_model TEXT NOT NULL,
    api_version TEXT NOT NULL,
    models TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (workspace_id, name)
) STRICT;
