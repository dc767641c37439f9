//! `auth_required`: telling the person that a server of the conversation waits for them to
//! connect. A registered server the turn could not list because the caller has not signed in
//! (`needs_auth`) or has not filled in their own credentials (`needs_user_credentials`) gets
//! one event after `meta`; the answer goes on without its tools (it stays in
//! `meta.unavailable_servers` too). The chat engine knows nothing of OAuth: whoever wires it
//! may plug in an [`AuthorizationStarter`] ([`crate::ChatServiceBuilder::authorization`]) that
//! starts the flow for the caller, so the event can carry the authorization URL.

use crate::events::{AuthRequiredEvent, ChatEvent, UnavailableServer};
use async_trait::async_trait;
use std::fmt;
use switchboard_core::{Principal, ServerId};

/// The code of a server the caller has not connected (OAuth sign-in).
pub const NEEDS_AUTH: &str = "needs_auth";
/// The code of a server that needs the caller's own credentials (user fields).
pub const NEEDS_USER_CREDENTIALS: &str = "needs_user_credentials";

#[async_trait]
pub trait AuthorizationStarter: Send + Sync + fmt::Debug {
    /// Starts the sign-in of `principal` to `server_id` and returns where to send them;
    /// `None` when it cannot be started here (the person then asks the authorize API, which
    /// says why). Must not fail the answer.
    async fn authorization_url(
        &self,
        principal: &Principal,
        server_id: &ServerId,
    ) -> Option<String>;
}

/// The `auth_required` events of a turn whose catalog left `unavailable` out.
pub(crate) async fn auth_required_events(
    unavailable: &[UnavailableServer],
    principal: &Principal,
    starter: Option<&dyn AuthorizationStarter>,
) -> Vec<ChatEvent> {
    let mut events = Vec::new();
    for server in unavailable {
        let Some(server_id) = &server.server_id else {
            continue;
        };
        let message = match server.code.as_str() {
            NEEDS_AUTH => format!(
                "{} needs you to sign in: connect your account to use its tools",
                server.server
            ),
            NEEDS_USER_CREDENTIALS => format!(
                "{} needs your own credentials: fill them in on the servers page to use its tools",
                server.server
            ),
            _ => continue,
        };
        let authorization_url = match starter {
            Some(starter) if server.code == NEEDS_AUTH => {
                starter.authorization_url(principal, server_id).await
            }
            _ => None,
        };
        events.push(ChatEvent::AuthRequired(AuthRequiredEvent {
            server: server.server.clone(),
            server_id: server_id.clone(),
            code: server.code.clone(),
            authorization_url,
            message,
        }));
    }
    events
}
