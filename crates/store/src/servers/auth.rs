//! How a server authenticates its callers (issue 11): the `auth` object of its connection
//! configuration. `mode` says where credentials come from (`none`; `headers`: static headers,
//! API key or env, possibly with `{{user.NAME}}` references to each person's own values;
//! `oauth`: OAuth 2.1), `credential_scope` whether one connection serves everyone (`shared`) or
//! each person connects their own (`per_user`), `user_fields` what each person fills in, and
//! `oauth` the admin's pre-registered client (its secret lives among the server's encrypted
//! secrets, never here).
//!
//! Rows from before the field read as the default: mode decided from the secrets
//! ([`ServerAuthConfig::effective_mode`]), shared, no user fields.

use super::model::{ServerSecrets, ServerSecretsSummary};
use crate::error::StoreError;
use crate::validate;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use switchboard_core::TransportKind;

/// Where a server's credentials come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthMode {
    None,
    Headers,
    Oauth,
}

impl AuthMode {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMode::None => "none",
            AuthMode::Headers => "headers",
            AuthMode::Oauth => "oauth",
        }
    }
}

impl fmt::Display for AuthMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who one set of credentials serves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CredentialScope {
    /// One connection for the workspace (an admin connects it).
    #[default]
    Shared,
    /// Each person connects their own account.
    PerUser,
}

/// How the client authenticates at the token endpoint (RFC 7591 names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenEndpointAuthMethod {
    None,
    ClientSecretBasic,
    ClientSecretPost,
}

/// A value each person fills in for themselves, referenced as `{{user.NAME}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserField {
    /// What the form calls it, e.g. "Personal access token".
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Shown masked in forms. Every value is stored encrypted and never returned either way.
    #[serde(default)]
    pub secret: bool,
}

/// The admin's pre-registered OAuth client (its secret is `ServerSecrets::oauth_client_secret`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthClientConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<TokenEndpointAuthMethod>,
    /// Scopes to ask for; unset: from the server's challenge or metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
}

/// A server's authentication settings. `Default` is what rows written before it read as.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerAuthConfig {
    /// Unset: decided from the secrets ([`ServerAuthConfig::effective_mode`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<AuthMode>,
    #[serde(default)]
    pub credential_scope: CredentialScope,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub user_fields: BTreeMap<String, UserField>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuthClientConfig>,
}

impl ServerAuthConfig {
    pub fn is_default(&self) -> bool {
        self == &ServerAuthConfig::default()
    }

    /// The mode in force: the one set, else `headers` when the server has headers, an API key,
    /// env values or user fields, else `none`.
    pub fn effective_mode(&self, secrets: &ServerSecretsSummary) -> AuthMode {
        self.mode.unwrap_or_else(|| {
            let has_static = !secrets.header_names.is_empty()
                || secrets.has_api_key
                || !secrets.env_names.is_empty()
                || !self.user_fields.is_empty();
            if has_static {
                AuthMode::Headers
            } else {
                AuthMode::None
            }
        })
    }

    /// Whether each person's calls need a session of their own: their own OAuth connection or
    /// their own values for user fields.
    pub fn needs_per_user_sessions(&self) -> bool {
        !self.user_fields.is_empty()
            || (self.mode == Some(AuthMode::Oauth)
                && self.credential_scope == CredentialScope::PerUser)
    }
}

/// Whether `name` may name a user field: `[A-Z0-9_]+`, at most 64 characters.
pub fn is_user_field_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|byte| byte.is_ascii_uppercase() || byte.is_ascii_digit() || byte == b'_')
}

/// The names `{{user.NAME}}` references in `text`, in order (a malformed `{{…}}` is text).
pub fn user_field_references(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{user.") {
        let after = &rest[start + "{{user.".len()..];
        match after.find("}}") {
            Some(end) if is_user_field_name(&after[..end]) => {
                names.push(&after[..end]);
                rest = &after[end + 2..];
            }
            _ => rest = after,
        }
    }
    names
}

/// `text` with every `{{user.NAME}}` replaced by `values[NAME]`; `Err(NAME)` names the first
/// reference without a value.
pub fn substitute_user_fields<'a>(
    text: &'a str,
    values: &BTreeMap<String, String>,
) -> Result<String, &'a str> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{user.") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "{{user.".len()..];
        match after.find("}}") {
            Some(end) if is_user_field_name(&after[..end]) => {
                let name = &after[..end];
                out.push_str(values.get(name).ok_or(name)?);
                rest = &after[end + 2..];
            }
            _ => {
                out.push_str("{{user.");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The rules of an `auth` object, with the secrets when they are being set: user field names
/// and titles, `oauth` only for remote transports, and every `{{user.NAME}}` in a header, the
/// API key or env naming a declared field.
pub fn validate_auth(
    transport: TransportKind,
    auth: &ServerAuthConfig,
    secrets: Option<&ServerSecrets>,
) -> Result<(), StoreError> {
    for (name, field) in &auth.user_fields {
        if !is_user_field_name(name) {
            return Err(StoreError::invalid(
                "auth.user_fields",
                format!("'{name}' is not a field name: use 1-64 of A-Z, 0-9 and _"),
            ));
        }
        if field.title.trim().is_empty() {
            return Err(StoreError::invalid(
                "auth.user_fields",
                format!("{name}: the title must not be empty"),
            ));
        }
        validate::no_nul("auth.user_fields", &field.title)?;
        validate::no_nul(
            "auth.user_fields",
            field.description.as_deref().unwrap_or_default(),
        )?;
    }
    if auth.mode == Some(AuthMode::Oauth) && transport == TransportKind::Stdio {
        return Err(StoreError::invalid(
            "auth.mode",
            "oauth is for remote servers (streamable_http, sse, websocket), not stdio",
        ));
    }
    if auth.oauth.is_some() && auth.mode != Some(AuthMode::Oauth) {
        return Err(StoreError::invalid(
            "auth.oauth",
            "an OAuth client is set only with mode oauth",
        ));
    }
    if let Some(oauth) = &auth.oauth {
        validate::no_nul("auth.oauth", oauth.client_id.as_deref().unwrap_or_default())?;
        if oauth
            .client_id
            .as_deref()
            .is_some_and(|id| id.trim().is_empty())
        {
            return Err(StoreError::invalid(
                "auth.oauth",
                "client_id must not be empty",
            ));
        }
        for scope in oauth.scopes.iter().flatten() {
            if scope.is_empty() || scope.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(StoreError::invalid(
                    "auth.oauth",
                    format!("scope '{scope}' must be one non-empty word"),
                ));
            }
        }
    }
    let Some(secrets) = secrets else {
        return Ok(());
    };
    if secrets.oauth_client_secret.is_some()
        && auth
            .oauth
            .as_ref()
            .and_then(|oauth| oauth.client_id.as_ref())
            .is_none()
    {
        return Err(StoreError::invalid(
            "auth.oauth",
            "a client secret needs auth.oauth.client_id",
        ));
    }
    let texts = secrets
        .headers
        .values()
        .map(|value| ("headers", value))
        .chain(secrets.api_key.iter().map(|value| ("api_key", value)))
        .chain(secrets.env.values().map(|value| ("env", value)));
    for (field, text) in texts {
        if let Some(name) = user_field_references(text)
            .into_iter()
            .find(|name| !auth.user_fields.contains_key(*name))
        {
            return Err(StoreError::invalid(
                field,
                format!("{{{{user.{name}}}}} names no field of auth.user_fields"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_found_and_substituted() {
        let text = "Bearer {{user.KG_TOKEN}} and {{user.bad}} {{user.X_1}}";
        assert_eq!(user_field_references(text), vec!["KG_TOKEN", "X_1"]);
        let values = BTreeMap::from([
            ("KG_TOKEN".to_owned(), "abc".to_owned()),
            ("X_1".to_owned(), "z".to_owned()),
        ]);
        assert_eq!(
            substitute_user_fields(text, &values).unwrap(),
            "Bearer abc and {{user.bad}} z"
        );
        assert_eq!(
            substitute_user_fields("{{user.MISSING}}", &values),
            Err("MISSING")
        );
        assert_eq!(substitute_user_fields("plain", &values).unwrap(), "plain");
    }

    #[test]
    fn old_rows_read_as_the_default_and_the_mode_follows_the_secrets() {
        let auth: ServerAuthConfig = serde_json::from_value(serde_json::json!({})).unwrap();
        assert!(auth.is_default());
        let mut secrets = ServerSecretsSummary::default();
        assert_eq!(auth.effective_mode(&secrets), AuthMode::None);
        secrets.has_api_key = true;
        assert_eq!(auth.effective_mode(&secrets), AuthMode::Headers);
        assert!(is_user_field_name("GITHUB_TOKEN") && !is_user_field_name("github"));
    }
}
