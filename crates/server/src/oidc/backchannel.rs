//! Back-channel logout (OpenID Connect Back-Channel Logout 1.0): the provider POSTs a
//! `logout_token` to `/auth/oidc/backchannel-logout` when a person signs out there (or an
//! administrator ends their session), and every browser session of that person here ends.
//!
//! The token is a JWT the provider signed: its signature is checked against the provider's
//! JWKS (fetched again once for a key we do not know, like an ID token's), then `iss` (the
//! provider), `aud` (our client id), `iat` (not in the future, not older than
//! [`MAX_AGE_SECS`]), `exp` when present, the back-channel logout event in `events`, a `sub`
//! and no `nonce` (which would make it an ID token). A person is found by (issuer, `sub`);
//! `sid` alone is not enough here (sessions are not stored by the provider's session id), so
//! a token with only `sid` is refused, and one with both ends all of the person's sessions —
//! more than the one session, never fewer.

use super::provider::{Discovered, Provider, ProviderError};
use base64::Engine;
use openidconnect::JsonWebKey;
use openidconnect::core::{CoreJsonWebKey, CoreJwsSigningAlgorithm};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The `events` member a logout token must carry.
pub const LOGOUT_EVENT: &str = "http://schemas.openid.net/event/backchannel-logout";
/// How old a logout token may be (its `iat`).
pub const MAX_AGE_SECS: i64 = 600;
/// How far in the future `iat` may be (clocks differ a little).
const CLOCK_LEEWAY_SECS: i64 = 60;

/// Why a logout token was refused (400 to the provider).
#[derive(Debug, thiserror::Error)]
pub enum LogoutTokenError {
    #[error("the logout token is not a signed JWT (header.payload.signature)")]
    Malformed,
    #[error("the logout token's algorithm `{0}` is not accepted")]
    Algorithm(String),
    #[error("the logout token is signed with a key the provider does not publish")]
    UnknownKey,
    #[error("the logout token's signature is not valid")]
    Signature,
    #[error("the logout token's `{0}` is missing or wrong")]
    Claim(&'static str),
    #[error("the logout token carries a `nonce`: it is not a logout token")]
    Nonce,
    #[error("the logout token has no `sub`; a `sid` alone is not enough on this Switchboard")]
    NoSubject,
    #[error("the identity provider could not be read: {0}")]
    Provider(#[from] ProviderError),
    #[error("the store failed: {0}")]
    Store(#[from] switchboard_store::StoreError),
}

#[derive(Debug, Deserialize)]
struct Header {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
}

/// One audience or several.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

impl Audience {
    fn contains(&self, wanted: &str) -> bool {
        match self {
            Audience::One(audience) => audience == wanted,
            Audience::Many(audiences) => audiences.iter().any(|audience| audience == wanted),
        }
    }
}

#[derive(Debug, Deserialize)]
struct LogoutClaims {
    iss: String,
    aud: Audience,
    iat: i64,
    #[serde(default)]
    exp: Option<i64>,
    #[serde(default)]
    events: Option<Map<String, Value>>,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    nonce: Option<Value>,
}

/// A verified logout token: whose sessions end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogoutSubject {
    pub issuer: String,
    pub subject: String,
}

/// The parts of a compact JWS, decoded.
struct Parts<'a> {
    signing_input: &'a str,
    header: Header,
    claims: LogoutClaims,
    signature: Vec<u8>,
}

fn decode(token: &str) -> Result<Parts<'_>, LogoutTokenError> {
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut pieces = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (pieces.next(), pieces.next(), pieces.next(), pieces.next())
    else {
        return Err(LogoutTokenError::Malformed);
    };
    let json = |piece: &str| {
        engine
            .decode(piece)
            .map_err(|_| LogoutTokenError::Malformed)
    };
    let header: Header =
        serde_json::from_slice(&json(header)?).map_err(|_| LogoutTokenError::Malformed)?;
    let claims: LogoutClaims = serde_json::from_slice(&json(payload)?)
        .map_err(|_| LogoutTokenError::Claim("iss, aud or iat"))?;
    Ok(Parts {
        signing_input: &token[..token.len() - signature.len() - 1],
        header,
        claims,
        signature: json(signature)?,
    })
}

/// Checks the signature with the provider's keys: `Err(UnknownKey)` when none of them has the
/// token's key id.
fn check_signature(discovered: &Discovered, parts: &Parts<'_>) -> Result<(), LogoutTokenError> {
    let algorithm: CoreJwsSigningAlgorithm =
        serde_json::from_value(Value::String(parts.header.alg.clone()))
            .map_err(|_| LogoutTokenError::Algorithm(parts.header.alg.clone()))?;
    if matches!(algorithm, CoreJwsSigningAlgorithm::None) {
        return Err(LogoutTokenError::Algorithm("none".into()));
    }
    let keys: Vec<&CoreJsonWebKey> = discovered
        .metadata
        .jwks()
        .keys()
        .iter()
        .filter(|key| match (&parts.header.kid, key.key_id()) {
            (Some(wanted), Some(id)) => id.as_str() == wanted,
            _ => true,
        })
        .collect();
    if keys.is_empty() {
        return Err(LogoutTokenError::UnknownKey);
    }
    let message = parts.signing_input.as_bytes();
    if keys.iter().any(|key| {
        key.verify_signature(&algorithm, message, &parts.signature)
            .is_ok()
    }) {
        Ok(())
    } else {
        Err(LogoutTokenError::Signature)
    }
}

/// The claims' checks, at `now` (Unix seconds).
fn check_claims(
    claims: &LogoutClaims,
    issuer: &str,
    client_id: &str,
    now: i64,
) -> Result<String, LogoutTokenError> {
    if claims.iss != issuer {
        return Err(LogoutTokenError::Claim("iss"));
    }
    if !claims.aud.contains(client_id) {
        return Err(LogoutTokenError::Claim("aud"));
    }
    if claims.iat > now + CLOCK_LEEWAY_SECS || claims.iat < now - MAX_AGE_SECS {
        return Err(LogoutTokenError::Claim("iat"));
    }
    if claims.exp.is_some_and(|exp| exp <= now) {
        return Err(LogoutTokenError::Claim("exp"));
    }
    let event = claims
        .events
        .as_ref()
        .and_then(|events| events.get(LOGOUT_EVENT));
    if !event.is_some_and(Value::is_object) {
        return Err(LogoutTokenError::Claim("events"));
    }
    if claims.nonce.is_some() {
        return Err(LogoutTokenError::Nonce);
    }
    claims.sub.clone().ok_or(LogoutTokenError::NoSubject)
}

/// Verifies `token` for the provider and client of `provider` at `now` (Unix seconds).
pub async fn verify(
    provider: &Provider,
    token: &str,
    now: i64,
) -> Result<LogoutSubject, LogoutTokenError> {
    let parts = decode(token)?;
    let mut discovered = provider.discovered().await?;
    if let Err(LogoutTokenError::UnknownKey) = check_signature(&discovered, &parts) {
        discovered = provider
            .refreshed(&discovered)
            .await?
            .ok_or(LogoutTokenError::UnknownKey)?;
    }
    check_signature(&discovered, &parts)?;
    let issuer = discovered.metadata.issuer().to_string();
    let subject = check_claims(&parts.claims, &issuer, &provider.config().client_id, now)?;
    Ok(LogoutSubject { issuer, subject })
}

/// What a back-channel logout did: the person (when the provider's subject is one of ours)
/// and how many of their sessions ended.
#[derive(Debug)]
pub struct LoggedOut {
    pub subject: LogoutSubject,
    pub person: Option<switchboard_store::UserRecord>,
    pub ended_sessions: u64,
}

/// Verifies `token` and ends every browser session of the person it names in the `[oidc]`
/// workspace (none when nobody here is linked to that subject: still a success).
pub async fn log_out(
    oidc: &super::OidcService,
    token: &str,
    now: i64,
) -> Result<LoggedOut, LogoutTokenError> {
    let subject = verify(oidc.provider(), token, now).await?;
    let store = oidc.store();
    let workspace = store
        .find_workspace_by_name(&oidc.config().workspace)
        .await?;
    let Some(workspace) = workspace else {
        return Ok(LoggedOut {
            subject,
            person: None,
            ended_sessions: 0,
        });
    };
    let person = store
        .find_oidc_person(&workspace.id, &subject.issuer, &subject.subject)
        .await?;
    let ended_sessions = match &person {
        Some(person) => store.end_web_sessions_of(&workspace.id, &person.id).await?,
        None => 0,
    };
    Ok(LoggedOut {
        subject,
        person,
        ended_sessions,
    })
}
