//! Single sign-ons in the audit log: `auth.signed_in` (the person, whether this sign-in
//! created them) and `auth.sign_in_refused` (the refusal's code and reason, in the workspace
//! people sign in to), `auth.logged_out` (the provider ended the person's sessions over the
//! back channel). Only what is safe to keep: no token, code, state or cookie.

use super::flow::{SignInError, SignedIn};
use crate::state::AppState;
use crate::wire_common::audit_details;
use serde::Serialize;
use switchboard_store::{NewAuditEvent, UserRecord};

#[derive(Serialize)]
struct SignedInDetails<'a> {
    method: &'static str,
    name: &'a str,
    created: bool,
}

#[derive(Serialize)]
struct RefusedDetails<'a> {
    method: &'static str,
    code: &'static str,
    reason: &'a str,
}

/// A person signed in.
pub(super) async fn signed_in(state: &AppState, signed_in: &SignedIn) {
    let user = &signed_in.user;
    let details = SignedInDetails {
        method: "oidc",
        name: &user.name,
        created: signed_in.created,
    };
    let actor = user.id.to_string();
    record_for(
        state,
        user,
        actor,
        "auth.signed_in",
        audit_details(&details),
    )
    .await;
}

/// A successful event about `user` by `actor`.
async fn record_for(
    state: &AppState,
    user: &UserRecord,
    actor: String,
    action: &str,
    details: serde_json::Value,
) {
    let event = NewAuditEvent {
        actor,
        action: action.into(),
        target: Some(user.id.to_string()),
        user_id: Some(user.id.clone()),
        conversation_id: None,
        server_name: None,
        tool_name: None,
        status: Some("success".into()),
        duration_ms: None,
        details,
    };
    state
        .approvals
        .audit()
        .record(&user.workspace_id, event)
        .await;
}

#[derive(Serialize)]
struct LoggedOutDetails<'a> {
    method: &'static str,
    name: &'a str,
    ended_sessions: u64,
}

/// The provider ended a person's sessions (back-channel logout): `auth.logged_out`.
pub(super) async fn logged_out_by_provider(state: &AppState, done: &super::backchannel::LoggedOut) {
    let Some(user) = &done.person else { return };
    let details = LoggedOutDetails {
        method: "oidc_backchannel",
        name: &user.name,
        ended_sessions: done.ended_sessions,
    };
    let actor = "identity_provider".to_owned();
    record_for(
        state,
        user,
        actor,
        "auth.logged_out",
        audit_details(&details),
    )
    .await;
}

/// A sign-in was refused; recorded in the `[oidc]` workspace (when it exists).
pub(super) async fn refused(state: &AppState, workspace_name: &str, error: &SignInError) {
    let workspace = match state.store.find_workspace_by_name(workspace_name).await {
        Ok(Some(workspace)) => workspace,
        Ok(None) => return,
        Err(error) => {
            tracing::warn!(%error, "a refused sign-in could not be audited");
            return;
        }
    };
    let reason = error.to_string();
    let details = RefusedDetails {
        method: "oidc",
        code: error.code(),
        reason: &reason,
    };
    let event = NewAuditEvent {
        actor: "anonymous".into(),
        action: "auth.sign_in_refused".into(),
        target: None,
        user_id: None,
        conversation_id: None,
        server_name: None,
        tool_name: None,
        status: Some("refused".into()),
        duration_ms: None,
        details: audit_details(&details),
    };
    state.approvals.audit().record(&workspace.id, event).await;
}
