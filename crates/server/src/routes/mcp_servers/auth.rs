//! A server's `auth` object on the wire (issue 11): what create and PATCH accept, and what
//! every server view shows the caller — the mode, whether the caller (or the workspace, for a
//! shared connection) is connected, and the user fields with whether the caller filled each.
//! Secret values (the OAuth client secret, people's field values) are write-only.

use crate::mirrors;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use switchboard_core::Principal;
use switchboard_store::{
    AuthMode, CredentialScope, OAuthClientConfig, ServerAuthConfig, ServerRecord, Store,
    StoreResult, TokenEndpointAuthMethod, UserField,
};
use utoipa::ToSchema;

/// How callers authenticate to the server. Absent on create: `mode` follows the credentials
/// (`headers` with headers, an API key, env or user fields; else `none`), `shared`.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthBody {
    #[serde(default)]
    #[schema(value_type = Option<mirrors::AuthMode>)]
    mode: Option<AuthMode>,
    #[serde(default)]
    #[schema(value_type = Option<mirrors::CredentialScope>)]
    credential_scope: Option<CredentialScope>,
    /// Values each person fills in (`PUT …/user-credentials`), by name (`[A-Z0-9_]+`),
    /// referenced as `{{user.NAME}}` in headers, `api_key` or env.
    #[serde(default)]
    user_fields: BTreeMap<String, UserFieldBody>,
    /// The admin's pre-registered OAuth client (mode `oauth` only).
    #[serde(default)]
    oauth: Option<OAuthClientBody>,
}

/// One user field.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UserFieldBody {
    title: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    secret: bool,
}

/// A pre-registered OAuth client.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OAuthClientBody {
    #[serde(default)]
    client_id: Option<String>,
    /// Write-only; stored encrypted with the server's secrets. Absent on PATCH: kept.
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<mirrors::TokenEndpointAuthMethod>)]
    token_endpoint_auth_method: Option<TokenEndpointAuthMethod>,
    #[serde(default)]
    scopes: Option<Vec<String>>,
}

impl AuthBody {
    /// The stored configuration and the client secret sent with it, if any.
    pub fn into_config(self) -> (ServerAuthConfig, Option<String>) {
        let (oauth, secret) = match self.oauth {
            Some(body) => (
                Some(OAuthClientConfig {
                    client_id: body.client_id,
                    token_endpoint_auth_method: body.token_endpoint_auth_method,
                    scopes: body.scopes,
                }),
                body.client_secret,
            ),
            None => (None, None),
        };
        let config = ServerAuthConfig {
            mode: self.mode,
            credential_scope: self.credential_scope.unwrap_or_default(),
            user_fields: self
                .user_fields
                .into_iter()
                .map(|(name, field)| {
                    let field = UserField {
                        title: field.title,
                        description: field.description,
                        secret: field.secret,
                    };
                    (name, field)
                })
                .collect(),
            oauth,
        };
        (config, secret)
    }
}

/// The server's authentication as it stands for the caller.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuthView {
    #[schema(value_type = mirrors::AuthMode)]
    pub mode: AuthMode,
    #[schema(value_type = mirrors::CredentialScope)]
    pub credential_scope: CredentialScope,
    /// Mode `oauth`: tokens are stored for the caller (per-user) or the workspace (shared).
    pub connected: bool,
    /// The scopes granted to that connection.
    pub scopes: Vec<String>,
    /// When its access token expires, if known.
    pub expires_at: Option<DateTime<Utc>>,
    /// Who it is connected as, if known.
    pub account: Option<String>,
    /// The fields each person fills in, with whether the caller has.
    pub user_fields: Vec<UserFieldView>,
    /// The pre-registered OAuth client, if one is set (no secret).
    pub oauth: Option<OAuthClientView>,
}

/// One user field and whether the caller has set it (the value is never returned).
#[derive(Debug, Serialize, ToSchema)]
pub struct UserFieldView {
    pub name: String,
    pub title: String,
    pub description: Option<String>,
    pub secret: bool,
    pub is_set: bool,
}

/// A pre-registered OAuth client as shown.
#[derive(Debug, Serialize, ToSchema)]
pub struct OAuthClientView {
    pub client_id: Option<String>,
    #[schema(value_type = Option<mirrors::TokenEndpointAuthMethod>)]
    pub token_endpoint_auth_method: Option<TokenEndpointAuthMethod>,
    pub scopes: Option<Vec<String>>,
    pub has_client_secret: bool,
}

/// The `auth` view of `record` for `principal` (nothing is decrypted).
pub(super) async fn auth_view(
    store: &Store,
    principal: &Principal,
    record: &ServerRecord,
) -> StoreResult<AuthView> {
    let auth = &record.connection.auth;
    let mode = auth.effective_mode(&record.secrets);
    let connection = if mode == AuthMode::Oauth {
        let user =
            (auth.credential_scope == CredentialScope::PerUser).then_some(&principal.user_id);
        store
            .oauth_connection_summary(&record.workspace_id, &record.id, user)
            .await?
    } else {
        None
    };
    let set = if auth.user_fields.is_empty() {
        Default::default()
    } else {
        store
            .user_credential_names(&record.workspace_id, &record.id, &principal.user_id)
            .await?
    };
    Ok(AuthView {
        mode,
        credential_scope: auth.credential_scope,
        connected: connection.is_some(),
        scopes: connection
            .as_ref()
            .map(|summary| summary.scopes.clone())
            .unwrap_or_default(),
        expires_at: connection.as_ref().and_then(|summary| summary.expires_at),
        account: connection.and_then(|summary| summary.account),
        user_fields: auth
            .user_fields
            .iter()
            .map(|(name, field)| UserFieldView {
                name: name.clone(),
                title: field.title.clone(),
                description: field.description.clone(),
                secret: field.secret,
                is_set: set.contains(name),
            })
            .collect(),
        oauth: auth.oauth.as_ref().map(|oauth| OAuthClientView {
            client_id: oauth.client_id.clone(),
            token_endpoint_auth_method: oauth.token_endpoint_auth_method,
            scopes: oauth.scopes.clone(),
            has_client_secret: record.secrets.has_oauth_client_secret,
        }),
    })
}
