-- Knowledge graph, SQLite flavour (twin: migrations/postgres/0002_knowledge_graph.sql).
--
-- One schema history per workspace: every accepted schema change is a version (its content hash
-- and the full schema as JSON) with the changelog entries that produced it. Objects and
-- relationships are JSON property bags validated by the application against the schema.
-- Relationships reference objects by (workspace_id, id), so they cannot cross workspaces and go
-- away with their objects.

CREATE TABLE kg_schema_versions (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    sequence INTEGER NOT NULL,
    version TEXT NOT NULL,
    message TEXT,
    schema TEXT NOT NULL,
    object_type_count INTEGER NOT NULL,
    relationship_type_count INTEGER NOT NULL,
    property_count INTEGER NOT NULL,
    change_count INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (workspace_id, sequence)
) STRICT;

CREATE TABLE kg_changelog (
    workspace_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    position INTEGER NOT NULL,
    version TEXT NOT NULL,
    change TEXT NOT NULL,
    subject TEXT NOT NULL,
    type_name TEXT,
    relationship_name TEXT,
    property_name TEXT,
    description TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (workspace_id, sequence, position),
    FOREIGN KEY (workspace_id, sequence) REFERENCES kg_schema_versions (workspace_id, sequence) ON DELETE CASCADE
) STRICT;

CREATE TABLE kg_objects (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    object_type TEXT NOT NULL,
    properties TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (workspace_id, id)
) STRICT;
CREATE INDEX kg_objects_by_type ON kg_objects (workspace_id, object_type);

CREATE TABLE kg_relationships (
    workspace_id TEXT NOT NULL,
    id TEXT NOT NULL,
    relationship_type TEXT NOT NULL,
    from_id TEXT NOT NULL,
    to_id TEXT NOT NULL,
    properties TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (workspace_id, id),
    FOREIGN KEY (workspace_id, from_id) REFERENCES kg_objects (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, to_id) REFERENCES kg_objects (workspace_id, id) ON DELETE CASCADE
) STRICT;
CREATE INDEX kg_relationships_from ON kg_relationships (workspace_id, from_id);
CREATE INDEX kg_relationships_to ON kg_relationships (workspace_id, to_id);
