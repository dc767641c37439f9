-- Single sign-on with OpenID Connect, SQLite flavour (twin: migrations/postgres/0013_oidc_sessions.sql).
--
-- oidc_identities: a person signed in through a provider is matched by (issuer, subject), the
-- only pair OpenID Connect promises is stable; the e-mail address may change or be reused.
-- oidc_logins: a sign-in in progress, keyed by the digest of its `state`, taken once (DELETE …
-- RETURNING) by the callback; its PKCE verifier and nonce are sealed and never leave the server.
-- web_sessions: a browser's sign-in, known by the digest of its cookie only; it joins the
-- person on every request, so a deactivated person's session stops at once.
CREATE TABLE oidc_identities (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    email TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (issuer, subject),
    FOREIGN KEY (workspace_id, user_id) REFERENCES users (workspace_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX oidc_identities_by_user ON oidc_identities (workspace_id, user_id);

CREATE TABLE oidc_logins (
    state_digest TEXT PRIMARY KEY NOT NULL,
    payload_ciphertext BLOB NOT NULL,
    expires_at TEXT NOT NULL
) STRICT;

CREATE TABLE web_sessions (
    id TEXT PRIMARY KEY NOT NULL,
    session_digest TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    id_token TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    FOREIGN KEY (workspace_id, user_id) REFERENCES users (workspace_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX web_sessions_by_user ON web_sessions (workspace_id, user_id);
