//! Records the unit tests of several modules build the same way, kept in one place so that a new
//! field of a store record is filled in once. Test-only; nothing here is compiled into the crate.

use switchboard_core::{ServerId, TransportKind, WorkspaceId};
use switchboard_store::{
    ServerConnectionConfig, ServerRecord, ServerSecretsSummary, ServerStatus, SyncStatus,
};

/// A never-synced Streamable HTTP server of workspace `w1`, disconnected, at `url`.
pub fn server_record(id: &str, name: &str, url: &str, is_active: bool) -> ServerRecord {
    let now = chrono::Utc::now();
    ServerRecord {
        id: ServerId::from(id),
        workspace_id: WorkspaceId::from("w1"),
        name: name.to_owned(),
        transport: TransportKind::StreamableHttp,
        url: Some(url.to_owned()),
        command: None,
        args: Vec::new(),
        connection: ServerConnectionConfig::default(),
        secrets: ServerSecretsSummary::default(),
        status: ServerStatus::Disconnected,
        last_error: None,
        tools_cache: None,
        resources_cache: None,
        prompts_cache: None,
        last_synced_at: None,
        sync_status: SyncStatus::NeverSynced,
        version: 1,
        is_active,
        created_at: now,
        updated_at: now,
    }
}
