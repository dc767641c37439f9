//! `[oidc]` in the configuration file: single sign-on with one OpenID Connect provider. Absent
//! (the default), the web UI signs in with API tokens only.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;
use switchboard_core::InvalidSetting;
use switchboard_store::users::UserRole;

/// The path of the redirect URI unless `redirect_path` says otherwise.
pub const DEFAULT_REDIRECT_PATH: &str = "/auth/oidc/callback";

/// `[oidc]`: the provider, the client registered with it, and who may come in as what.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OidcConfig {
    /// The issuer (`https://login.example.com/realms/acme`); its
    /// `/.well-known/openid-configuration` is read at the first sign-in. Every request to the
    /// provider passes `[mcp.url_policy]`.
    pub issuer: String,
    pub client_id: String,
    /// The client secret; set it with `SWITCHBOARD_OIDC_CLIENT_SECRET` rather than in the
    /// file. Unset: a public client (PKCE only).
    #[serde(default)]
    pub client_secret: Option<ClientSecret>,
    /// What the sign-in button says: "Sign in with {display_name}". Default "single sign-on".
    #[serde(default = "default_display_name")]
    pub display_name: String,
    /// Path of the redirect URI under `server.public_url`. Default `/auth/oidc/callback`.
    #[serde(default = "default_redirect_path")]
    pub redirect_path: String,
    /// Scopes asked for. Default `openid`, `email`, `profile`.
    #[serde(default = "default_scopes")]
    pub scopes: Vec<String>,
    /// The workspace (by name) people land in. Default `default`.
    #[serde(default = "default_workspace")]
    pub workspace: String,
    /// The role of a person created at their first sign-in. Default `member`.
    #[serde(default = "default_role")]
    pub default_role: UserRole,
    /// A claim (from the ID token or the userinfo answer) whose values choose the role, e.g.
    /// `groups`; with `role_map`, the highest role among the values that map wins, and it is
    /// applied at every sign-in. Unset: `default_role` at the first sign-in, then the People
    /// page decides.
    #[serde(default)]
    pub role_claim: Option<String>,
    /// Claim value → role, e.g. `{ "sb-admins" = "admin" }`.
    #[serde(default)]
    pub role_map: BTreeMap<String, UserRole>,
    /// When not empty, only people whose verified e-mail address is in one of these domains
    /// may sign in.
    #[serde(default)]
    pub allowed_email_domains: Vec<String>,
    /// How long a browser session lasts, in hours. Default 12.
    #[serde(default = "default_session_hours")]
    pub session_hours: u64,
}

fn default_display_name() -> String {
    "single sign-on".into()
}
fn default_redirect_path() -> String {
    DEFAULT_REDIRECT_PATH.into()
}
fn default_scopes() -> Vec<String> {
    ["openid", "email", "profile"].map(String::from).to_vec()
}
fn default_workspace() -> String {
    switchboard_store::DEFAULT_WORKSPACE_NAME.into()
}
fn default_role() -> UserRole {
    UserRole::Member
}
fn default_session_hours() -> u64 {
    12
}

impl std::fmt::Debug for OidcConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcConfig")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("display_name", &self.display_name)
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

/// The client secret; `Debug` never shows it.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct ClientSecret(String);

impl ClientSecret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[REDACTED]")
    }
}

impl OidcConfig {
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        let issuer = url::Url::parse(&self.issuer)
            .map_err(|error| InvalidSetting::new("issuer", format!("not a URL: {error}")))?;
        if !matches!(issuer.scheme(), "http" | "https") || issuer.query().is_some() {
            return Err(InvalidSetting::new(
                "issuer",
                "must be an http(s) URL without a query",
            ));
        }
        if self.client_id.trim().is_empty() {
            return Err(InvalidSetting::new("client_id", "must not be empty"));
        }
        if !self.redirect_path.starts_with('/') || self.redirect_path.contains(['?', '#']) {
            return Err(InvalidSetting::new(
                "redirect_path",
                "must be a path starting with `/`, without query or fragment",
            ));
        }
        if !self.scopes.iter().any(|scope| scope == "openid") {
            return Err(InvalidSetting::new("scopes", "must include `openid`"));
        }
        if self.role_claim.is_none() && !self.role_map.is_empty() {
            return Err(InvalidSetting::new(
                "role_map",
                "needs `role_claim` (the claim whose values it maps)",
            ));
        }
        if self.default_role == UserRole::Owner
            || self.role_map.values().any(|role| *role == UserRole::Owner)
        {
            return Err(InvalidSetting::new(
                "default_role",
                "sign-in gives `member` or `admin`; `owner` is the bootstrap user's",
            ));
        }
        InvalidSetting::require_positive("session_hours", self.session_hours)?;
        Ok(())
    }

    pub fn session_lifetime(&self) -> Duration {
        Duration::from_secs(self.session_hours.saturating_mul(3600))
    }

    /// True when `email`'s domain may sign in (always, without `allowed_email_domains`).
    pub fn allows_email(&self, email: Option<&str>) -> bool {
        if self.allowed_email_domains.is_empty() {
            return true;
        }
        let Some((_, domain)) = email.and_then(|email| email.rsplit_once('@')) else {
            return false;
        };
        self.allowed_email_domains
            .iter()
            .any(|allowed| allowed.trim_start_matches('@').eq_ignore_ascii_case(domain))
    }

    /// The role `values` of `role_claim` map to (the highest), if any maps.
    pub fn mapped_role<'a>(&self, values: impl IntoIterator<Item = &'a str>) -> Option<UserRole> {
        values
            .into_iter()
            .filter_map(|value| self.role_map.get(value).copied())
            .max_by_key(|role| role.is_admin())
    }
}

/// `[oidc]` for `https://id.example.com` and client `sb`, plus the TOML lines `extra`.
#[cfg(test)]
pub(crate) fn config(extra: &str) -> OidcConfig {
    toml::from_str(&format!(
        "issuer = \"https://id.example.com\"\nclient_id = \"sb\"\n{extra}"
    ))
    .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_domains_are_matched_whole_and_case_blind() {
        let config = config("allowed_email_domains = [\"example.com\"]");
        assert!(config.allows_email(Some("a@Example.com")));
        assert!(!config.allows_email(Some("a@evil-example.com")));
        assert!(!config.allows_email(None));
        assert!(super::config("").allows_email(None));
    }

    #[test]
    fn the_highest_mapped_role_wins_and_owner_is_refused() {
        let config =
            config("role_claim = \"groups\"\nrole_map = { staff = \"member\", ops = \"admin\" }");
        assert_eq!(config.mapped_role(["staff", "ops"]), Some(UserRole::Admin));
        assert_eq!(config.mapped_role(["nobody"]), None);
        assert!(
            super::config("default_role = \"owner\"")
                .validate()
                .is_err()
        );
        assert!(super::config("scopes = [\"email\"]").validate().is_err());
    }
}
