//! The authorization code flow with PKCE, as [`OidcService`] runs it.
//!
//! [`OidcService::start`]: a fresh `state`, nonce and PKCE verifier; the verifier and nonce are
//! kept server-side, sealed, under the `state`'s digest for [`LOGIN_LIFETIME`]
//! (`switchboard_store::oidc`), and the browser is sent to the provider.
//! [`OidcService::finish`]: the `state` is taken (once), the code exchanged with the verifier,
//! the ID token verified by openidconnect — signature against the provider's JWKS (fetched
//! again for a key we do not know yet), `iss`, `aud`, `exp`, and the nonce — then the person is
//! matched by (issuer, subject), created at their first sign-in, and given a session.

use super::config::OidcConfig;
use super::identity::{Identity, IdentityRefusal, jwt_claims};
use super::provider::{Discovered, Provider, ProviderError, error_chain};
use chrono::Utc;
use openidconnect::core::{CoreAuthenticationFlow, CoreGenderClaim, CoreIdToken};
use openidconnect::{
    AccessToken, AdditionalClaims, AuthorizationCode, ClaimsVerificationError, CsrfToken, Nonce,
    OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, Scope, SignatureVerificationError,
    TokenResponse, UserInfoClaims,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::WorkspaceId;
use switchboard_store::users::{UserRecord, UserRole};
use switchboard_store::{
    NewOidcPerson, NewWebSession, OidcLoginSecrets, OidcLoginTake, Store, StoreError,
    UserAccessChange,
};

/// How long a started sign-in may take to come back.
pub const LOGIN_LIFETIME: Duration = Duration::from_secs(600);

/// Why a sign-in did not finish. Each says what happened in words a person can act on.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    #[error("{0}")]
    Provider(#[from] ProviderError),
    #[error("the sign-in link is unknown, already used or forged (state); start again")]
    UnknownState,
    #[error("the sign-in took longer than {} minutes; start again", LOGIN_LIFETIME.as_secs() / 60)]
    ExpiredState,
    #[error("the provider did not sign you in: {0}")]
    ProviderRefused(String),
    #[error("the provider's answer has no authorization code")]
    MissingCode,
    #[error("the provider refused the authorization code: {0}")]
    Exchange(String),
    #[error("the provider's answer has no ID token")]
    NoIdToken,
    #[error("the ID token was refused: {0}")]
    IdToken(String),
    #[error("{0}")]
    Refused(#[from] IdentityRefusal),
    #[error("the user '{0}' is deactivated; an admin can reactivate them")]
    Deactivated(String),
    #[error("the workspace '{0}' named by `oidc.workspace` does not exist")]
    NoWorkspace(String),
    #[error("the store failed: {0}")]
    Store(#[from] StoreError),
}

impl SignInError {
    /// A short, stable name for logs and metrics.
    pub fn code(&self) -> &'static str {
        match self {
            SignInError::Provider(_) => "provider_unreachable",
            SignInError::UnknownState => "unknown_state",
            SignInError::ExpiredState => "expired_state",
            SignInError::ProviderRefused(_) => "provider_refused",
            SignInError::MissingCode => "missing_code",
            SignInError::Exchange(_) => "code_exchange",
            SignInError::NoIdToken => "no_id_token",
            SignInError::IdToken(_) => "invalid_id_token",
            SignInError::Refused(_) => "email_domain",
            SignInError::Deactivated(_) => "deactivated",
            SignInError::NoWorkspace(_) => "no_workspace",
            SignInError::Store(_) => "store",
        }
    }
}

/// The redirect back from the provider.
#[derive(Clone, Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CallbackQuery {
    pub code: Option<String>,
    pub state: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

/// A finished sign-in.
#[derive(Debug)]
pub struct SignedIn {
    pub user: UserRecord,
    pub session: NewWebSession,
    /// The person was created by this sign-in.
    pub created: bool,
}

/// Every claim of the userinfo answer (the standard ones are read from the same map).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct OtherClaims(Map<String, Value>);
impl AdditionalClaims for OtherClaims {}

/// Single sign-on with the configured provider.
#[derive(Debug)]
pub struct OidcService {
    provider: Provider,
    store: Store,
}

impl OidcService {
    pub fn new(provider: Provider, store: Store) -> Self {
        Self { provider, store }
    }

    pub fn config(&self) -> &OidcConfig {
        self.provider.config()
    }

    /// The provider (its metadata and keys), for the back-channel logout's verification.
    pub(super) fn provider(&self) -> &Provider {
        &self.provider
    }

    pub(super) fn store(&self) -> &Store {
        &self.store
    }

    /// Starts a sign-in: the provider's authorization URL to send the browser to.
    pub async fn start(&self) -> Result<String, SignInError> {
        let discovered = self.provider.discovered().await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = discovered.client.authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        );
        for scope in self
            .config()
            .scopes
            .iter()
            .filter(|scope| *scope != "openid")
        {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        let secrets = OidcLoginSecrets {
            pkce_verifier: verifier.secret().clone(),
            nonce: nonce.secret().clone(),
        };
        let expires_at = Utc::now() + LOGIN_LIFETIME;
        self.store
            .save_oidc_login(state.secret(), &secrets, expires_at)
            .await?;
        Ok(url.to_string())
    }

    /// Finishes a sign-in from the provider's redirect (see the module doc).
    pub async fn finish(&self, query: CallbackQuery) -> Result<SignedIn, SignInError> {
        let state = query.state.as_deref().ok_or(SignInError::UnknownState)?;
        let secrets = match self.store.take_oidc_login(state).await? {
            OidcLoginTake::Valid(secrets) => secrets,
            OidcLoginTake::Expired => return Err(SignInError::ExpiredState),
            OidcLoginTake::Unknown => return Err(SignInError::UnknownState),
        };
        if let Some(error) = query.error {
            let description = query.error_description.unwrap_or_default();
            return Err(SignInError::ProviderRefused(
                format!("{error} {description}").trim().to_owned(),
            ));
        }
        let code = query.code.ok_or(SignInError::MissingCode)?;
        let discovered = self.provider.discovered().await?;
        let http = self.provider.http();
        let tokens = discovered
            .client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|error| SignInError::Exchange(error.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(secrets.pkce_verifier))
            .request_async(&http)
            .await
            .map_err(|error| SignInError::Exchange(error_chain(&error)))?;
        let id_token = tokens.id_token().ok_or(SignInError::NoIdToken)?;
        let nonce = Nonce::new(secrets.nonce);
        let (discovered, subject) = self.verify(discovered, id_token, &nonce).await?;
        let mut claims = jwt_claims(&id_token.to_string());
        claims.extend(
            self.userinfo(&discovered, tokens.access_token(), &subject)
                .await,
        );
        let issuer = discovered.metadata.issuer().to_string();
        let identity = Identity::from_claims(self.config(), &issuer, &subject, &claims)?;
        let (user, created) = self.person(&identity).await?;
        let expires_at = Utc::now() + self.config().session_lifetime();
        let session = self
            .store
            .create_web_session(
                &user.workspace_id,
                &user.id,
                expires_at,
                Some(&id_token.to_string()),
            )
            .await?;
        Ok(SignedIn {
            user,
            session,
            created,
        })
    }

    /// The ID token's subject once openidconnect verified it; a key we do not know makes the
    /// provider's keys be fetched again and the token verified once more.
    async fn verify(
        &self,
        discovered: Arc<Discovered>,
        id_token: &CoreIdToken,
        nonce: &Nonce,
    ) -> Result<(Arc<Discovered>, String), SignInError> {
        let verified = id_token.claims(&discovered.client.id_token_verifier(), nonce);
        match verified {
            Ok(claims) => return Ok((discovered.clone(), claims.subject().to_string())),
            Err(ClaimsVerificationError::SignatureVerification(
                SignatureVerificationError::NoMatchingKey,
            )) => {}
            Err(error) => return Err(SignInError::IdToken(error_chain(&error))),
        }
        let Some(refreshed) = self.provider.refreshed(&discovered).await? else {
            return Err(SignInError::IdToken(
                "it is signed with a key the provider does not publish".into(),
            ));
        };
        let claims = id_token
            .claims(&refreshed.client.id_token_verifier(), nonce)
            .map_err(|error| SignInError::IdToken(error_chain(&error)))?;
        let subject = claims.subject().to_string();
        Ok((refreshed, subject))
    }

    /// The userinfo answer's claims (none when the provider has no such endpoint or fails:
    /// the ID token's claims are used alone then).
    async fn userinfo(
        &self,
        discovered: &Discovered,
        access_token: &AccessToken,
        subject: &str,
    ) -> Map<String, Value> {
        let Ok(request) = discovered.client.user_info(
            access_token.clone(),
            Some(openidconnect::SubjectIdentifier::new(subject.to_owned())),
        ) else {
            return Map::new();
        };
        let http = self.provider.http();
        let answer: Result<UserInfoClaims<OtherClaims, CoreGenderClaim>, _> =
            request.request_async(&http).await;
        match answer.map(serde_json::to_value) {
            Ok(Ok(Value::Object(claims))) => claims,
            Ok(_) => Map::new(),
            Err(error) => {
                tracing::warn!(error = %error_chain(&error), "the provider's userinfo answer could not be read; using the ID token's claims");
                Map::new()
            }
        }
    }

    /// The person `identity` is, created at the first sign-in; their role follows
    /// `role_claim` at every sign-in when it maps.
    async fn person(&self, identity: &Identity) -> Result<(UserRecord, bool), SignInError> {
        let workspace_id = self.workspace().await?;
        let found = self
            .store
            .find_oidc_person(&workspace_id, &identity.issuer, &identity.subject)
            .await?;
        let Some(user) = found else {
            let person = NewOidcPerson {
                issuer: &identity.issuer,
                subject: &identity.subject,
                email: identity.email.as_deref(),
                name: &identity.display_name,
                role: identity.mapped_role.unwrap_or(self.config().default_role),
            };
            let user = self.store.create_oidc_person(&workspace_id, person).await?;
            tracing::info!(user = %user.name, role = %user.role, "created a person at their first single sign-on");
            return Ok((user, true));
        };
        if !user.active {
            return Err(SignInError::Deactivated(user.name));
        }
        match identity.mapped_role {
            Some(role) if role != user.role && user.role != UserRole::Owner => {
                let change = UserAccessChange {
                    role: Some(role),
                    active: None,
                };
                let user = self
                    .store
                    .update_user_access(&workspace_id, &user.id, change)
                    .await?;
                Ok((user, false))
            }
            _ => Ok((user, false)),
        }
    }

    async fn workspace(&self) -> Result<WorkspaceId, SignInError> {
        let name = &self.config().workspace;
        self.store
            .find_workspace_by_name(name)
            .await?
            .map(|workspace| workspace.id)
            .ok_or_else(|| SignInError::NoWorkspace(name.clone()))
    }

    /// The provider's end-session URL (RP-initiated logout, with the ended session's ID token
    /// as hint and `post_logout` to come back to) when its metadata names one.
    pub async fn end_session_url(
        &self,
        id_token: Option<&str>,
        post_logout: &str,
    ) -> Option<String> {
        let discovered = self.provider.discovered().await.ok()?;
        let endpoint = discovered
            .metadata
            .additional_metadata()
            .end_session_endpoint
            .clone()?;
        let mut request = openidconnect::LogoutRequest::from(endpoint).set_client_id(
            openidconnect::ClientId::new(self.config().client_id.clone()),
        );
        if let Some(hint) = id_token.and_then(|token| token.parse::<CoreIdToken>().ok()) {
            request = request.set_id_token_hint(&hint);
        }
        if let Ok(redirect) = openidconnect::PostLogoutRedirectUrl::new(post_logout.to_owned()) {
            request = request.set_post_logout_redirect_uri(redirect);
        }
        Some(request.http_get_url().to_string())
    }
}
