//! [`Approvals`]: the human-in-the-loop service — one per process, cheap to clone. It hands
//! the chat engine its approval gate and the MCP client its elicitation responder, and gives
//! the HTTP layer decisions, answers, policies and the audit log. All of them share one
//! [`WaitingRoom`](crate::waiting::WaitingRoom), so a decision posted over HTTP wakes the call
//! that waits for it.

use crate::audit::AuditLog;
use crate::audit::ConnectionEvent;
use crate::config::ApprovalConfig;
use crate::elicitation::ElicitationRouter;
use crate::error::{ApprovalError, ApprovalResult};
use crate::gate::InteractiveApprovalGate;
use crate::waiting::WaitingRoom;
use std::sync::Arc;
use switchboard_chat::ApprovalGate;
use switchboard_core::{ApprovalPolicy, BudId, Principal, ServerId, UserId, WorkspaceId};
use switchboard_mcp_client::{
    ElicitationResponder, SessionEvent, SessionEventHandler, SessionEventKind,
};
use switchboard_store::Store;
use tokio_util::task::TaskTracker;

#[derive(Clone, Debug)]
pub struct Approvals {
    pub(crate) inner: Arc<ApprovalsInner>,
}

#[derive(Debug)]
pub(crate) struct ApprovalsInner {
    pub store: Store,
    pub config: ApprovalConfig,
    pub waiting: WaitingRoom,
    pub audit: AuditLog,
    /// Audit writes of session events, which run on their own tasks: shutdown waits for them
    /// before the store closes ([`Approvals::finish_audit_writes`]).
    pub session_audits: TaskTracker,
}

/// What start-up recovery changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecoveredRequests {
    pub approvals_expired: u64,
    pub elicitations_expired: u64,
}

impl Approvals {
    /// Checks `config` (an error names the `approval.` key).
    pub fn new(store: Store, config: ApprovalConfig) -> ApprovalResult<Self> {
        config.validate().map_err(|invalid| {
            ApprovalError::invalid(format!("approval.{}", invalid.key), invalid.reason)
        })?;
        Ok(Self {
            inner: Arc::new(ApprovalsInner {
                audit: AuditLog::new(store.clone()),
                store,
                config,
                waiting: WaitingRoom::default(),
                session_audits: TaskTracker::new(),
            }),
        })
    }

    pub fn config(&self) -> &ApprovalConfig {
        &self.inner.config
    }

    /// The admin rule's policy for a tool of a registered server in `bud` (none: the
    /// workspace's), the default when no rule names it. The gateway leaves `ALWAYS_DENY` tools
    /// out of what it lists; every call is still reviewed by the gate.
    pub async fn admin_policy(
        &self,
        workspace_id: &WorkspaceId,
        bud_id: Option<&BudId>,
        server_id: &ServerId,
        tool_name: &str,
    ) -> ApprovalResult<ApprovalPolicy> {
        Ok(
            crate::evaluation::admin_policy(
                &self.inner,
                workspace_id,
                bud_id,
                server_id,
                tool_name,
            )
            .await?,
        )
    }

    pub fn audit(&self) -> &AuditLog {
        &self.inner.audit
    }

    /// The gate to give the chat engine (`ChatServiceBuilder::approval_gate`).
    pub fn gate(&self) -> Arc<dyn ApprovalGate> {
        Arc::new(InteractiveApprovalGate::new(self.clone()))
    }

    /// The responder to give the MCP client (`McpClientBuilder::elicitation`): forms from
    /// upstreams reach the conversation whose call caused them.
    pub fn elicitation_responder(&self) -> Arc<dyn ElicitationResponder> {
        Arc::new(ElicitationRouter::new(self.clone()))
    }

    /// The handler to give the MCP client (`McpClientBuilder::on_session_event`): sessions
    /// connecting, failing to start and closing are audited (`server.connect`,
    /// `server.error`, `server.disconnect`).
    pub fn session_event_handler(&self) -> SessionEventHandler {
        let audit = self.inner.audit.clone();
        let tracker = self.inner.session_audits.clone();
        SessionEventHandler::new(move |event: SessionEvent| {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                return;
            };
            let audit = audit.clone();
            tracker.spawn_on(
                async move {
                    let connection = match event.kind {
                        SessionEventKind::Connected { protocol_version } => {
                            ConnectionEvent::Connected { protocol_version }
                        }
                        SessionEventKind::StartFailed { code, message } => ConnectionEvent::Error {
                            code: code.to_owned(),
                            message,
                        },
                        SessionEventKind::Closed { reason } => ConnectionEvent::Disconnected {
                            reason: reason.to_owned(),
                        },
                    };
                    audit
                        .connection_event(&event.workspace_id, &event.server_name, &connection)
                        .await;
                },
                &runtime,
            );
        })
    }

    /// Waits (at most `limit`) for the audit writes of session events still running — the
    /// sessions closed at shutdown are audited `server.disconnect` — so none is attempted on a
    /// closed store. Call after the MCP client's shutdown, before the store's.
    pub async fn finish_audit_writes(&self, limit: std::time::Duration) {
        self.inner.session_audits.close();
        if tokio::time::timeout(limit, self.inner.session_audits.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                pending = self.inner.session_audits.len(),
                "audit writes of closing sessions still running at shutdown"
            );
        }
    }

    /// Start-up: requests left pending by processes that are no longer alive (the previous
    /// run, a replica that died) are marked expired, so the conversations show what happened
    /// (their calls were failed by the chat's recovery). Requests waiting in live replicas on
    /// the same database, and in this process, are left alone (the store's instances).
    pub async fn recover_after_restart(&self) -> ApprovalResult<RecoveredRequests> {
        Ok(RecoveredRequests {
            approvals_expired: self.inner.store.expire_pending_approval_requests().await?,
            elicitations_expired: self
                .inner
                .store
                .expire_pending_elicitation_requests()
                .await?,
        })
    }
}

/// Only the owner of a conversation, or an admin, acts on its requests.
pub(crate) fn authorize_owner_or_admin(
    principal: &Principal,
    owner: &UserId,
    what: &str,
) -> ApprovalResult<()> {
    if &principal.user_id == owner || principal.is_admin() {
        Ok(())
    } else {
        Err(ApprovalError::Forbidden(format!(
            "only the conversation's owner or an admin may {what}"
        )))
    }
}
