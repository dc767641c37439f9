//! Who the provider says signed in, read from the verified ID token's claims and the userinfo
//! answer, and what that person may be here: their e-mail domain is checked against
//! `allowed_email_domains` (only a verified address counts), their display name chosen, and
//! their role mapped from `role_claim`.

use super::config::OidcConfig;
use base64::Engine;
use serde_json::{Map, Value};
use switchboard_store::users::UserRole;

/// What a sign-in tells us about the person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub issuer: String,
    pub subject: String,
    /// Only a verified address is kept.
    pub email: Option<String>,
    pub display_name: String,
    /// The role `role_claim` maps to, when configured and a value maps.
    pub mapped_role: Option<UserRole>,
}

/// Why a person may not come in.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdentityRefusal {
    #[error(
        "sign-in is limited to verified e-mail addresses of {allowed}; the provider gave {given}"
    )]
    EmailDomain { allowed: String, given: String },
}

/// The claims of a JWT whose signature and claims were already verified (its payload only).
pub fn jwt_claims(jwt: &str) -> Map<String, Value> {
    jwt.split('.')
        .nth(1)
        .and_then(|payload| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(payload)
                .ok()
        })
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

impl Identity {
    /// The person in `claims` (the ID token's, with the userinfo answer's merged over them).
    pub fn from_claims(
        config: &OidcConfig,
        issuer: &str,
        subject: &str,
        claims: &Map<String, Value>,
    ) -> Result<Self, IdentityRefusal> {
        let text = |name: &str| {
            claims
                .get(name)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|value| !value.is_empty())
        };
        let verified = claims.get("email_verified").and_then(Value::as_bool) == Some(true);
        let email = text("email").filter(|_| verified).map(str::to_owned);
        if !config.allows_email(email.as_deref()) {
            return Err(IdentityRefusal::EmailDomain {
                allowed: config.allowed_email_domains.join(", "),
                given: match (text("email"), verified) {
                    (Some(email), true) => email.to_owned(),
                    (Some(email), false) => format!("{email} (not verified)"),
                    (None, _) => "no e-mail address".to_owned(),
                },
            });
        }
        let display_name = email
            .clone()
            .or_else(|| text("preferred_username").map(str::to_owned))
            .or_else(|| text("name").map(str::to_owned))
            .unwrap_or_else(|| format!("{subject} ({issuer})"));
        let mapped_role = config.role_claim.as_deref().and_then(|claim| {
            let values: Vec<&str> = match claims.get(claim) {
                Some(Value::String(value)) => vec![value.as_str()],
                Some(Value::Array(values)) => values.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            config.mapped_role(values)
        });
        Ok(Self {
            issuer: issuer.to_owned(),
            subject: subject.to_owned(),
            email,
            display_name: display_name.chars().take(200).collect(),
            mapped_role,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::config;
    use super::*;
    use serde_json::json;

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn an_unverified_address_does_not_pass_a_domain_rule() {
        let config = config("allowed_email_domains = [\"example.com\"]");
        let unverified = claims(json!({"email": "a@example.com", "email_verified": false}));
        assert!(Identity::from_claims(&config, "i", "s", &unverified).is_err());
        let verified = claims(json!({"email": "a@example.com", "email_verified": true}));
        let identity = Identity::from_claims(&config, "i", "s", &verified).unwrap();
        assert_eq!(identity.display_name, "a@example.com");
    }

    #[test]
    fn groups_map_to_a_role() {
        let config = config("role_claim = \"groups\"\nrole_map = { ops = \"admin\" }");
        let found = claims(json!({"groups": ["staff", "ops"], "preferred_username": "bo"}));
        let identity = Identity::from_claims(&config, "i", "s", &found).unwrap();
        assert_eq!(identity.mapped_role, Some(UserRole::Admin));
        assert_eq!(identity.display_name, "bo");
    }
}
