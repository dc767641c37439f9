//! [`OAuthError`]: every way an authorization can fail, as a sentence for the person connecting
//! an account. rmcp's `AuthError` is converted here once; no token, client secret, code or
//! PKCE verifier is ever part of a message (rmcp's texts name endpoints and server answers).

use super::http::OAuthHttpError;
use rmcp::transport::auth::AuthError;

#[derive(Debug, Clone, thiserror::Error)]
pub enum OAuthError {
    /// A discovery, registration, token or revocation request was refused by the outbound URL
    /// policy (or its redirect was): nothing was sent there.
    #[error("{0}")]
    Http(#[from] OAuthHttpError),
    #[error("could not discover how {server} is authorized: {reason}")]
    Discovery { server: String, reason: String },
    #[error(
        "the authorization server offers no way to register Switchboard: no pre-registered client \
         is configured, it does not accept Client ID Metadata Documents and it has no registration \
         endpoint"
    )]
    NoClientRegistration,
    #[error("registering Switchboard with the authorization server failed: {0}")]
    Registration(String),
    #[error(
        "the authorization server does not support PKCE with S256, which MCP requires; it cannot \
         be used"
    )]
    PkceUnsupported,
    #[error(
        "this authorization attempt is unknown, was already used or has expired; start connecting \
         again"
    )]
    UnknownState,
    #[error("this authorization attempt is older than 10 minutes; start connecting again")]
    StateExpired,
    #[error(
        "the authorization answer came from '{received}', not from '{expected}' where it was \
         started (RFC 9207 issuer check); nothing was stored"
    )]
    IssuerMismatch { expected: String, received: String },
    #[error(
        "the authorization answer does not name its issuer though '{expected}' promises to \
         (RFC 9207); nothing was stored"
    )]
    MissingIssuer { expected: String },
    #[error("the authorization server refused the authorization: {0}")]
    Denied(String),
    #[error("the callback is missing its '{0}' parameter")]
    MissingCallbackParameter(&'static str),
    #[error("the authorization server did not issue a token: {0}")]
    Token(String),
    #[error("there is no usable token for this server: it must be connected (again)")]
    AuthorizationRequired,
    #[error("the token store failed: {0}")]
    Store(String),
    #[error("the authorization server answered unexpectedly: {0}")]
    Protocol(String),
}

impl OAuthError {
    /// Stable snake_case identifier for API answers.
    pub fn code(&self) -> &'static str {
        match self {
            OAuthError::Http(OAuthHttpError::Refused { .. }) => "url_policy",
            OAuthError::Http(_) => "oauth_http",
            OAuthError::Discovery { .. } => "oauth_discovery",
            OAuthError::NoClientRegistration => "oauth_no_registration",
            OAuthError::Registration(_) => "oauth_registration",
            OAuthError::PkceUnsupported => "oauth_pkce_unsupported",
            OAuthError::UnknownState => "oauth_unknown_state",
            OAuthError::StateExpired => "oauth_state_expired",
            OAuthError::IssuerMismatch { .. } => "oauth_issuer_mismatch",
            OAuthError::MissingIssuer { .. } => "oauth_missing_issuer",
            OAuthError::Denied(_) => "oauth_denied",
            OAuthError::MissingCallbackParameter(_) => "oauth_bad_callback",
            OAuthError::Token(_) => "oauth_token",
            OAuthError::AuthorizationRequired => "needs_auth",
            OAuthError::Store(_) => "oauth_store",
            OAuthError::Protocol(_) => "oauth_protocol",
        }
    }

    /// rmcp's error for an authorization callback: there an issuer error is about the
    /// callback's `iss` (RFC 9207), not about metadata.
    pub(crate) fn from_callback(
        server: &str,
        error: AuthError,
        refusal: Option<OAuthHttpError>,
    ) -> Self {
        match error {
            AuthError::AuthorizationServerMismatch {
                expected_issuer,
                received_issuer,
            } => OAuthError::IssuerMismatch {
                expected: expected_issuer,
                received: received_issuer,
            },
            AuthError::AuthorizationServerMissingIssuer { expected_issuer } => {
                OAuthError::MissingIssuer {
                    expected: expected_issuer,
                }
            }
            other => Self::from_auth(server, other, refusal),
        }
    }

    /// rmcp's error, with the policy refusal `refusal` (read back from the HTTP client) taking
    /// precedence: rmcp turns some HTTP errors into text, the refusal keeps its type.
    pub(crate) fn from_auth(
        server: &str,
        error: AuthError,
        refusal: Option<OAuthHttpError>,
    ) -> Self {
        if let Some(refusal) = refusal {
            return OAuthError::Http(refusal);
        }
        match error {
            AuthError::AuthorizationRequired
            | AuthError::TokenRefreshRejected(_)
            | AuthError::TokenExpired => OAuthError::AuthorizationRequired,
            AuthError::AuthorizationServerMismatch {
                expected_issuer,
                received_issuer,
            } => OAuthError::Discovery {
                server: server.to_owned(),
                reason: format!(
                    "the authorization server's metadata names the issuer '{received_issuer}' \
                     where '{expected_issuer}' was expected (RFC 8414), so it is not used"
                ),
            },
            AuthError::AuthorizationServerMissingIssuer { expected_issuer } => {
                OAuthError::Discovery {
                    server: server.to_owned(),
                    reason: format!(
                        "the authorization server's metadata names no issuer ('{expected_issuer}' \
                         was expected)"
                    ),
                }
            }
            AuthError::PkceUnsupported => OAuthError::PkceUnsupported,
            AuthError::RegistrationFailed(reason) => OAuthError::Registration(reason),
            AuthError::TokenExchangeFailed(reason)
            | AuthError::TokenRefreshFailed(reason)
            | AuthError::ClientCredentialsError(reason) => OAuthError::Token(reason),
            AuthError::CredentialStoreError(reason) => OAuthError::Store(reason),
            error @ (AuthError::DiscoveryRequestFailed { .. }
            | AuthError::ProtectedResourceMetadataInvalid { .. }
            | AuthError::AuthorizationServersUnavailable { .. }
            | AuthError::MetadataError(_)
            | AuthError::NoAuthorizationSupport) => OAuthError::Discovery {
                server: server.to_owned(),
                reason: with_source(&error),
            },
            other => OAuthError::Protocol(other.to_string()),
        }
    }
}

/// An error's text followed by its source's (rmcp's discovery error keeps the HTTP cause there).
fn with_source(error: &(dyn std::error::Error + 'static)) -> String {
    match error.source() {
        Some(source) => format!("{error} ({source})"),
        None => error.to_string(),
    }
}
