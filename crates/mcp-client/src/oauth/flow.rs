//! [`OAuthFlow`]: one connection's authorization with one MCP server, as the host drives it —
//! start (discovery, client registration, PKCE, the authorization URL), finish (callback →
//! tokens), a valid access token (refreshed ahead of expiry or on demand), the client
//! credentials grant, and revocation. Every step is a fresh rmcp `AuthorizationManager` over
//! the same stores, so a flow started on one request (or replica) finishes on another: what the
//! second step needs is in the state store (PKCE verifier, expected issuer, requested scopes),
//! the credential store (tokens) and the [`RegisteredClient`] the host keeps.

use super::error::OAuthError;
use super::http::{PolicedOAuthHttp, display_url};
use super::legacy_metadata;
use super::stores::{SharedCredentials, SharedStates};
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, CredentialStore, OAuthClientConfig,
    OAuthHttpRedirectPolicy, StateStore, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use url::Url;

/// How long an authorization attempt (its `state`) stays valid.
pub const STATE_LIFETIME: Duration = Duration::from_secs(600);
/// A token expiring sooner than this is refreshed before use.
pub const REFRESH_AHEAD: Duration = Duration::from_secs(60);

/// How the token endpoint authenticates the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenEndpointAuthMethod {
    None,
    ClientSecretBasic,
    ClientSecretPost,
}

impl TokenEndpointAuthMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenEndpointAuthMethod::None => "none",
            TokenEndpointAuthMethod::ClientSecretBasic => "client_secret_basic",
            TokenEndpointAuthMethod::ClientSecretPost => "client_secret_post",
        }
    }
}

/// A client an admin registered with the authorization server out of band.
#[derive(Clone, Serialize, Deserialize)]
pub struct PreregisteredClient {
    pub client_id: String,
    pub client_secret: Option<String>,
    /// `None`: chosen from what the server advertises.
    pub auth_method: Option<TokenEndpointAuthMethod>,
}

impl std::fmt::Debug for PreregisteredClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreregisteredClient")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

/// What starting an authorization needs.
#[derive(Clone, Debug)]
pub struct AuthorizationStart {
    /// The exact redirect URI (the host's `/oauth/callback`).
    pub redirect_uri: String,
    /// Name sent with Dynamic Client Registration.
    pub client_name: String,
    /// Preferred over everything else when set.
    pub preregistered: Option<PreregisteredClient>,
    /// HTTPS URL of our Client ID Metadata Document, used when the server supports it.
    pub client_metadata_url: Option<String>,
    /// The upstream's `WWW-Authenticate` (from a 401, or a 403 `insufficient_scope`).
    pub challenge: Option<String>,
    /// Scopes to ask for instead of the discovered ones (a step-up asks for the union).
    pub scopes: Option<Vec<String>>,
}

/// The client as registered for one connection: keep it with the connection (serde) and hand
/// it back to every later step. Its `Debug` hides the secret.
#[derive(Clone, Serialize, Deserialize)]
pub struct RegisteredClient {
    pub client_id: String,
    pub client_secret: Option<String>,
    pub auth_method: TokenEndpointAuthMethod,
    pub redirect_uri: String,
    /// The challenge the flow began with, so later steps discover the same way.
    pub challenge: Option<String>,
}

impl std::fmt::Debug for RegisteredClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredClient")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .field("auth_method", &self.auth_method)
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

/// A started authorization: send the person to `authorization_url`.
#[derive(Clone, Debug)]
pub struct PendingAuthorization {
    pub authorization_url: String,
    /// The `state` the callback must bring back (the state store's key).
    pub state: String,
    pub scopes: Vec<String>,
    pub client: RegisteredClient,
}

/// The query parameters of the redirect back to us.
#[derive(Clone, Debug, Default)]
pub struct CallbackParams {
    pub code: Option<String>,
    pub state: Option<String>,
    /// RFC 9207 `iss`.
    pub iss: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

impl CallbackParams {
    /// Reads the parameters from a redirect URL (a `Location` header or the callback URL).
    pub fn from_url(url: &Url) -> Self {
        let mut params = CallbackParams::default();
        for (key, value) in url.query_pairs() {
            let slot = match key.as_ref() {
                "code" => &mut params.code,
                "state" => &mut params.state,
                "iss" => &mut params.iss,
                "error" => &mut params.error,
                "error_description" => &mut params.error_description,
                _ => continue,
            };
            *slot = Some(value.into_owned());
        }
        params
    }
}

/// What a connection holds, without the tokens themselves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrantInfo {
    pub scopes: Vec<String>,
    /// Seconds since the Unix epoch.
    pub expires_at: Option<u64>,
    pub refreshable: bool,
}

/// What [`OAuthFlow::revoke`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Revocation {
    /// The authorization server accepted the revocation (RFC 7009).
    Revoked,
    /// It offers no revocation endpoint; the tokens were only forgotten.
    NotOffered,
    /// Nothing was stored.
    NothingStored,
}

/// One connection's authorization with the MCP server at `server_url` (see the module doc).
#[derive(Clone)]
pub struct OAuthFlow {
    server_url: Url,
    http: PolicedOAuthHttp,
    credentials: Arc<dyn CredentialStore>,
    states: Arc<dyn StateStore>,
}

impl std::fmt::Debug for OAuthFlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthFlow")
            .field("server_url", &display_url(&self.server_url))
            .finish_non_exhaustive()
    }
}

impl OAuthFlow {
    pub fn new(
        server_url: Url,
        http: PolicedOAuthHttp,
        credentials: Arc<dyn CredentialStore>,
        states: Arc<dyn StateStore>,
    ) -> Self {
        Self {
            server_url,
            http,
            credentials,
            states,
        }
    }

    /// Discovers the authorization server, registers the client (pre-registered > Client ID
    /// Metadata Document > Dynamic Client Registration), picks the scopes (the challenge's,
    /// else the resource's `scopes_supported`, else none; `offline_access` when advertised)
    /// and stores the PKCE verifier under a fresh `state`.
    pub async fn start(
        &self,
        request: AuthorizationStart,
    ) -> Result<PendingAuthorization, OAuthError> {
        let http = self.http.for_operation();
        let (mut manager, metadata) = self.discovered(&http, request.challenge.as_deref()).await?;
        let scopes = match &request.scopes {
            Some(scopes) => scopes.clone(),
            None => manager.select_initial_scopes(&[]).await,
        };
        let client = self
            .register(&http, &mut manager, &metadata, &request, &scopes)
            .await?;
        let mut rmcp_request = AuthorizationRequest::new(request.redirect_uri.clone())
            .with_scopes(scopes.clone())
            .with_preregistered_client(client.client_id.clone());
        if let Some(secret) = sendable_secret(&client) {
            rmcp_request = rmcp_request.with_client_secret(secret);
        }
        let session = AuthorizationSession::new(manager, rmcp_request)
            .await
            .map_err(|(_, error)| self.error(&http, error))?;
        let authorization_url = session.get_authorization_url().to_owned();
        let parsed = Url::parse(&authorization_url)
            .map_err(|error| OAuthError::Protocol(format!("bad authorization URL: {error}")))?;
        let state = CallbackParams::from_url(&parsed)
            .state
            .ok_or_else(|| OAuthError::Protocol("the authorization URL has no state".into()))?;
        let scopes = parsed
            .query_pairs()
            .find(|(key, _)| key == "scope")
            .map(|(_, value)| value.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        Ok(PendingAuthorization {
            authorization_url,
            state,
            scopes,
            client,
        })
    }

    /// Finishes an authorization from its callback: the state must be known and fresh (it is
    /// single use), `iss` must name the server the flow began with (RFC 9207), then the code
    /// is exchanged (with the PKCE verifier and the resource indicator) and the tokens stored.
    pub async fn finish(
        &self,
        client: &RegisteredClient,
        callback: &CallbackParams,
    ) -> Result<GrantInfo, OAuthError> {
        if let Some(error) = &callback.error {
            if let Some(state) = &callback.state {
                let _ = self.states.delete(state).await;
            }
            let description = callback.error_description.as_deref().unwrap_or("");
            return Err(OAuthError::Denied(
                format!("{error} {description}").trim().to_owned(),
            ));
        }
        let state = callback
            .state
            .as_deref()
            .ok_or(OAuthError::MissingCallbackParameter("state"))?;
        let code = callback
            .code
            .as_deref()
            .ok_or(OAuthError::MissingCallbackParameter("code"))?;
        let stored = self
            .states
            .load(state)
            .await
            .map_err(|error| OAuthError::Store(error.to_string()))?
            .ok_or(OAuthError::UnknownState)?;
        if now_secs().saturating_sub(stored.created_at) > STATE_LIFETIME.as_secs() {
            let _ = self.states.delete(state).await;
            return Err(OAuthError::StateExpired);
        }
        let http = self.http.for_operation();
        let manager = self.configured(&http, client).await?;
        manager
            .exchange_code_for_token_with_issuer(code, state, callback.iss.as_deref())
            .await
            .map_err(|error| {
                OAuthError::from_callback(&display_url(&self.server_url), error, http.refusal())
            })?;
        self.grant_info()
            .await?
            .ok_or(OAuthError::AuthorizationRequired)
    }

    /// A valid access token: the stored one, or a refreshed one when it expires within
    /// [`REFRESH_AHEAD`]. [`OAuthError::AuthorizationRequired`] when none can be had.
    pub async fn access_token(&self, client: &RegisteredClient) -> Result<String, OAuthError> {
        let stored = self
            .load()
            .await?
            .ok_or(OAuthError::AuthorizationRequired)?;
        let token = stored
            .token_response
            .as_ref()
            .ok_or(OAuthError::AuthorizationRequired)?;
        use oauth2::TokenResponse as _;
        let expires_at = expires_at(&stored);
        match expires_at {
            Some(at) if at <= now_secs() + REFRESH_AHEAD.as_secs() => self.refresh(client).await,
            _ => Ok(token.access_token().secret().clone()),
        }
    }

    /// The stored access token while it is valid, without refreshing (client credentials
    /// connections get a new one by the grant). [`OAuthError::AuthorizationRequired`] else.
    pub async fn stored_access_token(&self) -> Result<String, OAuthError> {
        use oauth2::TokenResponse as _;
        let stored = self
            .load()
            .await?
            .ok_or(OAuthError::AuthorizationRequired)?;
        let token = stored
            .token_response
            .as_ref()
            .ok_or(OAuthError::AuthorizationRequired)?;
        match expires_at(&stored) {
            Some(at) if at <= now_secs() => Err(OAuthError::AuthorizationRequired),
            _ => Ok(token.access_token().secret().clone()),
        }
    }

    /// Refreshes now (after the upstream answered 401 to the current token). The store's
    /// refresh guard keeps two refreshes of one token from racing.
    pub async fn refresh(&self, client: &RegisteredClient) -> Result<String, OAuthError> {
        let http = self.http.for_operation();
        let manager = self.configured(&http, client).await?;
        let response = manager
            .refresh_token()
            .await
            .map_err(|error| self.error(&http, error))?;
        use oauth2::TokenResponse as _;
        Ok(response.access_token().secret().clone())
    }

    /// The client credentials grant (machine-to-machine servers, SEP-1046), with the resource
    /// indicator naming the server. The token is stored like any other.
    pub async fn client_credentials(
        &self,
        client_id: &str,
        client_secret: &str,
        scopes: Vec<String>,
    ) -> Result<GrantInfo, OAuthError> {
        let http = self.http.for_operation();
        let (mut manager, _) = self.discovered(&http, None).await?;
        let config = ClientCredentialsConfig::ClientSecret {
            client_id: client_id.to_owned(),
            client_secret: client_secret.to_owned(),
            scopes,
            resource: Some(self.server_url.to_string()),
        };
        manager
            .validate_client_credentials_metadata(&config)
            .and_then(|()| manager.configure_client_credentials(&config))
            .map_err(|error| self.error(&http, error))?;
        manager
            .exchange_client_credentials(&config)
            .await
            .map_err(|error| self.error(&http, error))?;
        self.grant_info()
            .await?
            .ok_or(OAuthError::AuthorizationRequired)
    }

    /// What is stored for this connection, without the tokens.
    pub async fn grant_info(&self) -> Result<Option<GrantInfo>, OAuthError> {
        Ok(self.load().await?.and_then(|stored| {
            use oauth2::TokenResponse as _;
            let token = stored.token_response.as_ref()?;
            Some(GrantInfo {
                scopes: stored.granted_scopes.clone(),
                expires_at: expires_at(&stored),
                refreshable: token.refresh_token().is_some(),
            })
        }))
    }

    /// Revokes the stored tokens at the authorization server when it offers revocation
    /// (RFC 7009; the refresh token, which takes its access tokens with it, else the access
    /// token), then forgets them whatever the server said.
    pub async fn revoke(&self, client: &RegisteredClient) -> Result<Revocation, OAuthError> {
        let Some(stored) = self.load().await? else {
            return Ok(Revocation::NothingStored);
        };
        let http = self.http.for_operation();
        let outcome = match self.discovered(&http, client.challenge.as_deref()).await {
            Ok((_, metadata)) => super::revoke::revoke(&http, &metadata, client, &stored).await,
            Err(error) => Err(error),
        };
        self.credentials
            .clear()
            .await
            .map_err(|error| OAuthError::Store(error.to_string()))?;
        outcome
    }

    /// Fetches `authorization_url` the way a browser whose user consents at once would, without
    /// following the redirect to the redirect URI, and reads the callback parameters from its
    /// `Location`. For headless authorization servers (the conformance suite's).
    pub async fn authorize_headlessly(
        &self,
        authorization_url: &str,
    ) -> Result<CallbackParams, OAuthError> {
        let request = http::Request::get(authorization_url)
            .body(Vec::new())
            .map_err(|error| OAuthError::Protocol(error.to_string()))?;
        let response = self
            .http
            .send(request, OAuthHttpRedirectPolicy::Stop)
            .await?;
        let location = response
            .headers()
            .get(http::header::LOCATION)
            .and_then(|value| value.to_str().ok())
            .ok_or_else(|| {
                OAuthError::Protocol(format!(
                    "the authorization endpoint answered {} without a redirect",
                    response.status()
                ))
            })?;
        let base = Url::parse(authorization_url)
            .map_err(|error| OAuthError::Protocol(error.to_string()))?;
        let location = base
            .join(location)
            .map_err(|error| OAuthError::Protocol(format!("bad Location: {error}")))?;
        Ok(CallbackParams::from_url(&location))
    }

    async fn load(&self) -> Result<Option<StoredCredentials>, OAuthError> {
        self.credentials
            .load()
            .await
            .map_err(|error| OAuthError::Store(error.to_string()))
    }

    /// A manager over our stores and HTTP client, with the metadata discovered.
    async fn discovered(
        &self,
        http: &PolicedOAuthHttp,
        challenge: Option<&str>,
    ) -> Result<(AuthorizationManager, AuthorizationMetadata), OAuthError> {
        let mut manager = AuthorizationManager::new_with_oauth_http_client(
            self.server_url.clone(),
            Arc::new(http.clone()),
        )
        .await
        .map_err(|error| self.error(http, error))?;
        manager.set_credential_store(SharedCredentials(self.credentials.clone()));
        manager.set_state_store(SharedStates(self.states.clone()));
        let metadata = match manager.resolve_metadata_from_challenge(challenge).await {
            Ok(resolution) => resolution.metadata,
            Err(AuthError::AuthorizationServerMismatch {
                expected_issuer,
                received_issuer,
            }) if legacy_metadata::is_same_origin_legacy_issuer(
                &self.server_url,
                &expected_issuer,
                &received_issuer,
            ) =>
            {
                legacy_metadata::fetch(http, &self.server_url, &received_issuer).await?
            }
            Err(error) => return Err(self.error(http, error)),
        };
        manager.set_metadata(metadata.clone());
        Ok((manager, metadata))
    }

    /// A discovered manager configured with `client`.
    async fn configured(
        &self,
        http: &PolicedOAuthHttp,
        client: &RegisteredClient,
    ) -> Result<AuthorizationManager, OAuthError> {
        let (mut manager, _) = self.discovered(http, client.challenge.as_deref()).await?;
        let mut config =
            OAuthClientConfig::new(client.client_id.clone(), client.redirect_uri.clone());
        if let Some(secret) = sendable_secret(client) {
            config = config.with_client_secret(secret);
        }
        manager
            .configure_client(config)
            .map_err(|error| self.error(http, error))?;
        Ok(manager)
    }

    /// The client to authorize as, in the spec's order of preference.
    async fn register(
        &self,
        http: &PolicedOAuthHttp,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
        request: &AuthorizationStart,
        scopes: &[String],
    ) -> Result<RegisteredClient, OAuthError> {
        let registered = |client_id: String, secret: Option<String>, method| RegisteredClient {
            auth_method: choose_auth_method(metadata, secret.is_some(), method),
            client_id,
            client_secret: secret,
            redirect_uri: request.redirect_uri.clone(),
            challenge: request.challenge.clone(),
        };
        if let Some(client) = &request.preregistered {
            return Ok(registered(
                client.client_id.clone(),
                client.client_secret.clone(),
                client.auth_method,
            ));
        }
        let supports_cimd = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(|value| value.as_bool())
            .unwrap_or(false);
        if let Some(url) = request
            .client_metadata_url
            .as_ref()
            .filter(|_| supports_cimd)
        {
            return Ok(registered(
                url.clone(),
                None,
                Some(TokenEndpointAuthMethod::None),
            ));
        }
        if metadata.registration_endpoint.is_none() {
            return Err(OAuthError::NoClientRegistration);
        }
        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let config = manager
            .register_client(&request.client_name, &request.redirect_uri, &scope_refs)
            .await
            .map_err(|error| self.error(http, error))?;
        Ok(registered(config.client_id, config.client_secret, None))
    }

    fn error(&self, http: &PolicedOAuthHttp, error: AuthError) -> OAuthError {
        OAuthError::from_auth(&display_url(&self.server_url), error, http.refusal())
    }
}

/// The scopes a `WWW-Authenticate` challenge names (its `scope` parameter), for a step-up that
/// asks for them together with those already granted.
pub fn challenged_scopes(www_authenticate: &str, server_url: &Url) -> Vec<String> {
    rmcp::transport::auth::WWWAuthenticateParams::parse(www_authenticate, server_url)
        .scope
        .map(|scope| scope.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The method to authenticate with: the registered one, else the best the server advertises
/// for a client with (or without) a secret. RFC 8414's default is `client_secret_basic`.
fn choose_auth_method(
    metadata: &AuthorizationMetadata,
    has_secret: bool,
    registered: Option<TokenEndpointAuthMethod>,
) -> TokenEndpointAuthMethod {
    if let Some(method) = registered {
        return method;
    }
    if !has_secret {
        return TokenEndpointAuthMethod::None;
    }
    let advertised: Vec<String> = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(|value| value.as_array())
        .map(|methods| {
            methods
                .iter()
                .filter_map(|method| method.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_else(|| vec!["client_secret_basic".to_owned()]);
    let offers = |method: &str| advertised.iter().any(|offered| offered == method);
    if offers("client_secret_basic") {
        TokenEndpointAuthMethod::ClientSecretBasic
    } else if offers("client_secret_post") {
        TokenEndpointAuthMethod::ClientSecretPost
    } else {
        TokenEndpointAuthMethod::None
    }
}

/// The secret, when the chosen method sends one (a public client sends none even if the
/// server issued one).
fn sendable_secret(client: &RegisteredClient) -> Option<String> {
    match client.auth_method {
        TokenEndpointAuthMethod::None => None,
        _ => client.client_secret.clone(),
    }
}

fn expires_at(stored: &StoredCredentials) -> Option<u64> {
    use oauth2::TokenResponse as _;
    let token = stored.token_response.as_ref()?;
    Some(stored.token_received_at? + token.expires_in()?.as_secs())
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}
