//! What goes into the audit log, and in which shape: every tool call (who, which conversation,
//! server and tool, arguments, result size, final state, duration, the approval decision and
//! who made it), every approval and elicitation outcome, every server connection event and
//! every configuration or policy change.
//!
//! Arguments and details are redacted by the store before they are written (keys such as
//! `apiKey`, `accessToken`, `token`, `password`, `credentials`, `authorization`). Elicitation
//! answers are never recorded, only their action. Writing the audit log never fails the action
//! being audited: a failed write is logged as an error.

use serde_json::{Value, json};
use switchboard_chat::{CallReport, GateDecision};
use switchboard_core::{Principal, WorkspaceId};
use switchboard_store::{NewAuditEvent, ServerRecord, Store};

/// An upstream connection event, as reported by the MCP client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConnectionEvent {
    Connected {
        protocol_version: String,
    },
    /// `idle`, `closed`, `dead`, `reconfigured`.
    Disconnected {
        reason: String,
    },
    /// A session could not be started (`code` is the MCP client's stable error code).
    Error {
        code: String,
        message: String,
    },
}

impl ConnectionEvent {
    fn status(&self) -> &'static str {
        match self {
            ConnectionEvent::Connected { .. } => "connect",
            ConnectionEvent::Disconnected { .. } => "disconnect",
            ConnectionEvent::Error { .. } => "error",
        }
    }
}

/// Writes audit events. Cheap to clone.
#[derive(Clone, Debug)]
pub struct AuditLog {
    store: Store,
}

impl AuditLog {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Appends `event`; a failure is logged, never returned.
    pub async fn record(&self, workspace_id: &WorkspaceId, event: NewAuditEvent) {
        let action = event.action.clone();
        if let Err(error) = self.store.append_audit_event(workspace_id, event).await {
            tracing::error!(%error, %action, workspace_id = %workspace_id, "could not write an audit event");
        }
    }

    /// A tool call reached its final state: its row written alone (the chat commits
    /// [`tool_call_event`]'s row with the call's final state instead).
    pub async fn tool_call(&self, report: &CallReport) {
        let event = tool_call_event(report);
        self.record(&report.request.principal.workspace_id, event)
            .await;
    }

    /// An upstream session connected, disconnected or failed.
    pub async fn connection_event(
        &self,
        workspace_id: &WorkspaceId,
        server_name: &str,
        event: &ConnectionEvent,
    ) {
        let details = match event {
            ConnectionEvent::Connected { protocol_version } => {
                json!({ "protocol_version": protocol_version })
            }
            ConnectionEvent::Disconnected { reason } => json!({ "reason": reason }),
            ConnectionEvent::Error { code, message } => json!({ "code": code, "error": message }),
        };
        self.record(
            workspace_id,
            NewAuditEvent {
                actor: "system".to_owned(),
                action: format!("server.{}", event.status()),
                target: Some(server_name.to_owned()),
                server_name: Some(server_name.to_owned()),
                status: Some(event.status().to_owned()),
                details,
                ..NewAuditEvent::default()
            },
        )
        .await;
    }

    /// An upstream's request during a gateway client's call (`method`:
    /// `elicitation/create`, `sampling/createMessage`) was put to that client; `outcome` is
    /// the answer's action (`accept`, `decline`, `cancel`), `answered` or `failed` — never
    /// its content.
    pub async fn upstream_request_forwarded(
        &self,
        principal: &Principal,
        server_name: &str,
        method: &str,
        client_name: &str,
        outcome: &str,
    ) {
        self.record(
            &principal.workspace_id,
            NewAuditEvent {
                actor: principal.user_id.as_str().to_owned(),
                action: "upstream_request.forwarded".to_owned(),
                target: Some(server_name.to_owned()),
                user_id: Some(principal.user_id.clone()),
                server_name: Some(server_name.to_owned()),
                status: Some(outcome.to_owned()),
                details: json!({ "method": method, "origin": "gateway", "client_name": client_name }),
                ..NewAuditEvent::default()
            },
        )
        .await;
    }

    /// A person changed configuration (a policy, a server, a token, a bud).
    pub async fn configuration_change(
        &self,
        principal: &Principal,
        change: ConfigurationChange<'_>,
    ) {
        self.record(
            &principal.workspace_id,
            NewAuditEvent {
                actor: principal.user_id.as_str().to_owned(),
                action: change.action.to_owned(),
                target: Some(change.target.to_owned()),
                user_id: Some(principal.user_id.clone()),
                server_name: change.server_name.map(str::to_owned),
                tool_name: change.tool_name.map(str::to_owned),
                status: Some("changed".to_owned()),
                details: change.details,
                ..NewAuditEvent::default()
            },
        )
        .await;
    }
}

/// The actor of the changes made with the binary's admin subcommands.
pub const COMMAND_LINE_ACTOR: &str = "cli";

impl AuditLog {
    /// Configuration changed with the binary's admin subcommands, on the store directly. No
    /// principal made it (whoever runs the binary on the machine is not a user of the
    /// workspace), so the actor is [`COMMAND_LINE_ACTOR`] and the details say `origin: cli`.
    pub async fn command_line_change(
        &self,
        workspace_id: &WorkspaceId,
        change: ConfigurationChange<'_>,
    ) {
        let mut details = change.details;
        if let Value::Object(fields) = &mut details {
            fields.insert("origin".to_owned(), Value::from(COMMAND_LINE_ACTOR));
        }
        self.record(
            workspace_id,
            NewAuditEvent {
                actor: COMMAND_LINE_ACTOR.to_owned(),
                action: change.action.to_owned(),
                target: Some(change.target.to_owned()),
                server_name: change.server_name.map(str::to_owned),
                tool_name: change.tool_name.map(str::to_owned),
                status: Some("changed".to_owned()),
                details,
                ..NewAuditEvent::default()
            },
        )
        .await;
    }
}

/// The audit row of a tool call that reached its final state: who, which conversation,
/// server and tool, arguments (redacted by the store), result size, final state, duration,
/// the decision and who made it, and where the call came from.
pub fn tool_call_event(report: &CallReport) -> NewAuditEvent {
    let request = &report.request;
    let (decision, decided_by) = match &report.decision {
        GateDecision::Allow { decided_by } => ("approved", decided_by.clone()),
        GateDecision::Deny { decided_by, .. } => ("denied", decided_by.clone()),
    };
    let server_name = request.target.server_name().to_owned();
    let status = report.final_state.as_str();
    let details = json!({
        "tool_call_id": request.tool_call_id,
        "llm_call_id": request.llm_call_id,
        "conversation_owner": request.conversation_owner,
        "token_id": request.principal.token_id,
        "server_id": match &request.target {
            switchboard_chat::GateTarget::Registered { server_id, .. } => json!(server_id),
            switchboard_chat::GateTarget::Ephemeral { .. } => Value::Null,
        },
        "ephemeral_url": match &request.target {
            switchboard_chat::GateTarget::Ephemeral { url, .. } => json!(url),
            switchboard_chat::GateTarget::Registered { .. } => Value::Null,
        },
        "arguments": request.arguments,
        "result_bytes": report.result_bytes,
        "decision": decision,
        "decided_by": decided_by,
        "error": report.error,
        "origin": request.origin.as_str(),
        "client_name": request.origin.client_name(),
    });
    NewAuditEvent {
        actor: request.principal.user_id.as_str().to_owned(),
        action: format!("tool_call.{status}"),
        target: Some(format!("{server_name}/{}", request.tool.name)),
        user_id: Some(request.principal.user_id.clone()),
        conversation_id: Some(request.conversation_id.clone()),
        server_name: Some(server_name),
        tool_name: Some(request.tool.name.clone()),
        status: Some(status.to_owned()),
        duration_ms: report
            .duration
            .map(|duration| i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)),
        details,
    }
}

impl AuditLog {
    /// A registered server was created, changed or deleted (`server.created`,
    /// `server.updated`, `server.deleted`). Only what is safe to show is recorded: no header,
    /// key or environment values, and no command arguments (they may carry credentials) —
    /// only their names and count.
    pub async fn server_change(&self, principal: &Principal, action: &str, record: &ServerRecord) {
        let details = json!({
            "server_id": record.id,
            "transport": record.transport,
            "url": record.url,
            "command": record.command,
            "argument_count": record.args.len(),
            "session_scope": record.connection.session_scope,
            "timeout_ms": record.connection.timeout_ms,
            "is_active": record.is_active,
            "header_names": record.secrets.header_names,
            "env_names": record.secrets.env_names,
            "bearer_key_configured": record.secrets.has_api_key,
            "version": record.version,
        });
        self.configuration_change(
            principal,
            ConfigurationChange {
                action,
                target: record.id.as_str(),
                server_name: Some(&record.name),
                tool_name: None,
                details,
            },
        )
        .await;
    }
}

/// One configuration change, for [`AuditLog::configuration_change`].
#[derive(Clone, Debug)]
pub struct ConfigurationChange<'a> {
    /// `area.verb`: `policy.set`, `server.updated`, `token.revoked`…
    pub action: &'a str,
    /// What was changed (an id or a `server/tool` pair).
    pub target: &'a str,
    pub server_name: Option<&'a str>,
    pub tool_name: Option<&'a str>,
    /// The change itself (secrets are redacted by the store).
    pub details: Value,
}

impl<'a> ConfigurationChange<'a> {
    /// A change of something that is not a server or one of its tools (a bud, a token, a user).
    pub fn new(action: &'a str, target: &'a str, details: Value) -> Self {
        Self {
            action,
            target,
            server_name: None,
            tool_name: None,
            details,
        }
    }
}
