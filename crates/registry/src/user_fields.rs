//! Per-user credentials without OAuth (issue 11): a server's headers, API key or env may say
//! `{{user.NAME}}`, and each person fills in their own value. The upstream built for a caller
//! carries that caller's values and a per-user session scope, so no session opened with one
//! person's key ever serves another. Without a caller (the background refresh) nothing is
//! built: the literal `{{user.NAME}}` is never sent upstream. A missing value makes the server
//! unavailable for that caller only, with the code [`NEEDS_USER_CREDENTIALS`].

use super::{RegistryError, ServerRegistry};
use std::collections::BTreeMap;
use switchboard_core::{SessionScope, UserId};
use switchboard_mcp_client::server::{UpstreamEndpoint, UpstreamServer};
use switchboard_store::{ServerRecord, substitute_user_fields, user_field_references};

/// The error code of a server that needs the caller's own values first.
pub const NEEDS_USER_CREDENTIALS: &str = "needs_user_credentials";

/// Whether `record` declares user fields (its connections are then built per caller).
pub fn has_user_fields(record: &ServerRecord) -> bool {
    !record.connection.auth.user_fields.is_empty()
}

impl ServerRegistry {
    /// `upstream` with the caller's values in place of every `{{user.NAME}}` and a per-user
    /// session scope, when `record` declares user fields; unchanged otherwise.
    pub(crate) async fn with_user_fields(
        &self,
        record: &ServerRecord,
        mut upstream: UpstreamServer,
        user: Option<&UserId>,
    ) -> Result<UpstreamServer, RegistryError> {
        if !has_user_fields(record) {
            return Ok(upstream);
        }
        let values = match user {
            Some(user) => {
                self.store()
                    .user_credentials(&record.workspace_id, &record.id, user)
                    .await?
            }
            None => BTreeMap::new(),
        };
        let missing = missing_fields(&upstream, &values);
        if !missing.is_empty() {
            let auth = &record.connection.auth;
            let titles = missing
                .iter()
                .map(|name| {
                    auth.user_fields
                        .get(name)
                        .map_or_else(|| name.clone(), |field| field.title.clone())
                })
                .collect();
            return Err(RegistryError::NeedsUserCredentials {
                server: record.name.clone(),
                titles,
            });
        }
        substitute(&mut upstream, &values);
        upstream.session_scope = SessionScope::PerUser;
        Ok(upstream)
    }
}

/// Every text of `upstream` that may carry a reference.
fn texts(upstream: &mut UpstreamServer) -> Vec<&mut String> {
    match &mut upstream.endpoint {
        UpstreamEndpoint::Remote(remote) => remote
            .headers
            .values_mut()
            .chain(remote.api_key.iter_mut())
            .collect(),
        UpstreamEndpoint::Stdio(command) => command.env.values_mut().collect(),
    }
}

/// The referenced field names without a value, each once, in order.
fn missing_fields(upstream: &UpstreamServer, values: &BTreeMap<String, String>) -> Vec<String> {
    let mut copy = upstream.clone();
    let mut missing: Vec<String> = Vec::new();
    for text in texts(&mut copy) {
        for name in user_field_references(text) {
            if !values.contains_key(name) && !missing.iter().any(|seen| seen == name) {
                missing.push(name.to_owned());
            }
        }
    }
    missing
}

fn substitute(upstream: &mut UpstreamServer, values: &BTreeMap<String, String>) {
    for text in texts(upstream) {
        if let Ok(replaced) = substitute_user_fields(text, values) {
            *text = replaced;
        }
    }
}
