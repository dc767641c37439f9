//! `POST /api/mcp/servers/import`: the MCP servers people already run in Claude Desktop,
//! Claude Code, Cursor, VS Code or Windsurf, registered from the client's configuration file.
//! Each entry becomes a [`Candidate`] and goes through the same checks and the same store path
//! as `POST /mcp/servers` (`crud::register`, `crud::store_change`): stdio needs `admin`, the
//! URL policy, the name rules. A dry run reports what would be created, changed or skipped and
//! stores nothing. Env values and headers are stored as the server's encrypted secrets, never
//! returned; `${…}` references become user fields or are reported (`references.rs`).

mod formats;
mod jsonc;
mod references;
#[cfg(test)]
mod tests;
pub(super) mod wire;

use super::bodies::Candidate;
use super::crud::{register, registration_policy, require_admin_for_stdio, store_change};
use super::failure::Failure;
use super::registry;
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
pub(super) use references::field_name;
use references::{InputDeclaration, Rewriter};
use std::collections::{BTreeMap, BTreeSet};
use switchboard_core::{Principal, SessionScope, TransportKind};
use switchboard_registry::ServerRegistry;
use switchboard_store::{ServerAuthConfig, ServerRecord, ServerSecrets};
use wire::{ImportAction, ImportEntryReport, OnConflict, SkipReason};
use wire::{ImportReport, ImportServersBody};

/// Registers the servers of a client's configuration file (or, with `dry_run`, says what it
/// would do).
#[utoipa::path(
    post,
    path = "/mcp/servers/import",
    tag = "mcp_servers",
    security(("bearer" = [])),
    request_body = ImportServersBody,
    responses(
        (status = 200, description = "What was (or would be) created, changed or skipped, per entry", body = ImportReport),
        (status = 400, description = "Malformed JSON, or content that is not a configuration file", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:write`", body = ErrorBody),
        (status = 422, description = "A body of the wrong shape (`content` missing or not a string, an unknown `format`)", body = ErrorBody),
        (status = 503, description = "The MCP client is not running", body = ErrorBody),
    )
)]
pub(super) async fn import_servers(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Json(body): Json<ImportServersBody>,
) -> Result<Json<ImportReport>, Failure> {
    let registry = registry(&state)?;
    let file = formats::parse(&body.content, body.format)
        .map_err(|error| ApiError::BadRequest(error.to_string()))?;
    let existing = state.store.list_servers(&principal.workspace_id).await?;
    let context = PlanContext {
        principal: &principal,
        registry,
        existing: &existing,
        inputs: &file.inputs,
        on_conflict: body.on_conflict,
    };
    let mut seen = BTreeSet::new();
    let mut entries = Vec::with_capacity(file.entries.len());
    for (name_in_file, value) in file.entries {
        let mut planned = context.plan(&name_in_file, value, &mut seen);
        if !body.dry_run {
            apply(&state, &principal, registry, &mut planned).await?;
        }
        entries.push(planned.report);
    }
    let count = |action| {
        entries
            .iter()
            .filter(|entry| entry.action == action)
            .count()
    };
    Ok(Json(ImportReport {
        format: file.format,
        format_detected: file.detected,
        dry_run: body.dry_run,
        created: count(ImportAction::Create),
        changed: count(ImportAction::Change),
        skipped: count(ImportAction::Skip),
        entries,
    }))
}

/// What an entry will do.
enum Work {
    Create(Candidate),
    Change(Box<ServerRecord>, Candidate),
}

struct Planned {
    report: ImportEntryReport,
    work: Option<Work>,
}

impl Planned {
    fn skip(mut report: ImportEntryReport, reason: SkipReason, message: String) -> Self {
        report.action = ImportAction::Skip;
        report.reason = Some(reason);
        report.message = Some(message);
        Planned { report, work: None }
    }
}

struct PlanContext<'a> {
    principal: &'a Principal,
    registry: &'a ServerRegistry,
    existing: &'a [ServerRecord],
    inputs: &'a BTreeMap<String, InputDeclaration>,
    on_conflict: OnConflict,
}

impl PlanContext<'_> {
    /// Decides one entry with the checks of `POST /mcp/servers`, storing nothing.
    fn plan(
        &self,
        name_in_file: &str,
        value: serde_json::Value,
        seen: &mut BTreeSet<String>,
    ) -> Planned {
        let name = server_name(name_in_file);
        let mut report = ImportEntryReport {
            name_in_file: (name != name_in_file).then(|| name_in_file.to_owned()),
            name: name.clone(),
            action: ImportAction::Create,
            transport: None,
            server_id: None,
            reason: None,
            message: None,
            secrets: Vec::new(),
            user_fields: Vec::new(),
            references: Vec::new(),
            ignored_keys: Vec::new(),
        };
        if !seen.insert(name.clone()) {
            let message = format!("an earlier entry of the file is also named '{name}'");
            return Planned::skip(report, SkipReason::DuplicateInFile, message);
        }
        let imported = match formats::entry(value) {
            Ok(imported) => imported,
            Err(message) => return Planned::skip(report, SkipReason::UnsupportedEntry, message),
        };
        let candidate = candidate_of(&name, imported, self.inputs, &mut report);
        if require_admin_for_stdio(self.principal, candidate.transport == TransportKind::Stdio)
            .is_err()
        {
            let message =
                "a stdio server runs a program on this machine: only an admin may add one".into();
            return Planned::skip(report, SkipReason::StdioRequiresAdmin, message);
        }
        if let Err(invalid) = candidate.validate(registration_policy(self.registry, &candidate)) {
            let reason = if invalid.url_policy {
                SkipReason::UrlNotAllowed
            } else {
                SkipReason::Invalid
            };
            return Planned::skip(report, reason, invalid.to_string());
        }
        self.against_existing(report, candidate)
    }

    /// Create, change (`on_conflict: replace`) or skip a name the workspace already has.
    fn against_existing(&self, mut report: ImportEntryReport, candidate: Candidate) -> Planned {
        let Some(record) = self
            .existing
            .iter()
            .find(|record| record.name == candidate.name)
        else {
            return Planned {
                report,
                work: Some(Work::Create(candidate)),
            };
        };
        if ServerRegistry::is_marked_own_endpoint(record) {
            let message =
                "this is Switchboard's own knowledge-graph server; it is never replaced".into();
            return Planned::skip(report, SkipReason::NameConflict, message);
        }
        if self.on_conflict == OnConflict::Skip {
            let message = format!(
                "a server named '{}' exists (send on_conflict: replace to replace its configuration)",
                record.name
            );
            return Planned::skip(report, SkipReason::NameConflict, message);
        }
        report.action = ImportAction::Change;
        report.server_id = Some(record.id.to_string());
        report.message = Some(format!(
            "replaces the configuration of the existing server '{}' (version {})",
            record.name, record.version
        ));
        Planned {
            report,
            work: Some(Work::Change(Box::new(record.clone()), candidate)),
        }
    }
}

/// Stores a planned entry through the one creation (or change) path; a name taken or a
/// version moved meanwhile becomes a skip.
async fn apply(
    state: &AppState,
    principal: &Principal,
    registry: &ServerRegistry,
    planned: &mut Planned,
) -> Result<(), Failure> {
    let stored = match planned.work.take() {
        None => return Ok(()),
        Some(Work::Create(candidate)) => register(state, principal, registry, candidate).await,
        Some(Work::Change(record, candidate)) => {
            store_change(
                state,
                principal,
                registry,
                &record,
                record.version,
                candidate,
            )
            .await
        }
    };
    match stored {
        Ok(record) => {
            planned.report.server_id = Some(record.id.to_string());
            Ok(())
        }
        Err(Failure::Api(ApiError::Conflict(message))) => {
            let report = std::mem::replace(&mut planned.report, empty_report());
            *planned = Planned::skip(report, SkipReason::NameConflict, message);
            Ok(())
        }
        Err(other) => Err(other),
    }
}

fn empty_report() -> ImportEntryReport {
    ImportEntryReport {
        name: String::new(),
        name_in_file: None,
        action: ImportAction::Skip,
        transport: None,
        server_id: None,
        reason: None,
        message: None,
        secrets: Vec::new(),
        user_fields: Vec::new(),
        references: Vec::new(),
        ignored_keys: Vec::new(),
    }
}

/// A server name from an entry's key: `A-Z a-z 0-9 _ -`, anything else as `-`, at most 32.
pub(super) fn server_name(name_in_file: &str) -> String {
    name_in_file
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(32)
        .collect()
}

/// The entry as a registration, its references resolved; fills the report's secrets, user
/// fields, references and ignored keys.
fn candidate_of(
    name: &str,
    imported: formats::ImportedServer,
    inputs: &BTreeMap<String, InputDeclaration>,
    report: &mut ImportEntryReport,
) -> Candidate {
    let mut rewriter = Rewriter::new(inputs);
    let mut rewrite_map = |prefix: &str, map: BTreeMap<String, String>| {
        map.into_iter()
            .map(|(key, value)| {
                let text = rewriter.rewrite(&format!("{prefix}.{key}"), &value, true);
                (key, text)
            })
            .collect::<BTreeMap<_, _>>()
    };
    let env = rewrite_map("env", imported.env);
    let headers = rewrite_map("headers", imported.headers);
    let mut rewrite = |location: String, text: String| rewriter.rewrite(&location, &text, false);
    let args = imported
        .args
        .into_iter()
        .enumerate()
        .map(|(index, arg)| rewrite(format!("args[{index}]"), arg))
        .collect();
    let url = imported.url.map(|url| rewrite("url".into(), url));
    let command = imported
        .command
        .map(|command| rewrite("command".into(), command));
    let working_dir = imported.working_dir.map(|dir| rewrite("cwd".into(), dir));
    if let Some(path) = &imported.env_file {
        rewriter.not_imported(
            "envFile",
            path,
            "Switchboard cannot read a file on the machine of the imported file: add its variables as env",
        );
    }
    report.transport = Some(imported.transport);
    report.secrets = env
        .keys()
        .map(|key| format!("env.{key}"))
        .chain(headers.keys().map(|key| format!("headers.{key}")))
        .collect();
    report.user_fields = rewriter.user_fields.keys().cloned().collect();
    report.references = std::mem::take(&mut rewriter.references);
    report.ignored_keys = imported.ignored_keys;
    Candidate {
        name: name.to_owned(),
        transport: imported.transport,
        url,
        command,
        args,
        working_dir,
        session_scope: SessionScope::default(),
        timeout_ms: None,
        init_timeout_ms: None,
        secrets: ServerSecrets {
            headers,
            env,
            api_key: None,
            oauth_client_secret: None,
        },
        is_active: imported.is_active,
        auth: ServerAuthConfig {
            user_fields: rewriter.user_fields,
            ..ServerAuthConfig::default()
        },
    }
}
