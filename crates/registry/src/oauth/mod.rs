//! [`OAuthService`]: the host's side of OAuth 2.1 to remote MCP servers — who may connect what,
//! where the flow's state and tokens live, and what the callback does. The protocol itself
//! (discovery, registration, PKCE, token requests, revocation) is `mcp-client`'s
//! [`OAuthFlow`]; this module binds it to the store and to people:
//!
//! - **authorize**: a `per_user` server connects the caller's own account; a `shared` one the
//!   workspace's, and only an admin may start that. The flow's `state` (single use, 10 minutes)
//!   is saved with who started it and the PKCE verifier, sealed ([`flow_state`]).
//! - **complete** (the callback): the state is taken exactly once — unknown, reused or expired
//!   is refused before anything else — then the code is exchanged (issuer checked, PKCE, resource
//!   indicator) and the tokens stored under the connection the state names. Nothing is stored
//!   on any failure.
//! - **disconnect**: revoke at the authorization server when it offers revocation, then forget.
//! - **access_token**: a valid token for an upstream built for a caller (refreshed ahead of
//!   expiry, one refresh at a time across replicas through the store's lease), and only for the
//!   resource (server URL) it was issued for.
//! - **token_after_rejection**: after a 401, another call's newer token or one refresh.
//!
//! Tokens and client secrets never leave this module except as the bearer of an upstream
//! request: errors are `mcp-client`'s sentences, which never carry one.

mod credentials;
mod flow_state;

use credentials::{ConnectionCredentials, ConnectionKey};
use flow_state::StatePayload;
use std::sync::Arc;
use switchboard_core::{Principal, Scope, ServerId, UserId};
use switchboard_mcp_client::oauth::{
    AuthorizationStart, CallbackParams, InMemoryStateStore, OAuthError, OAuthFlow,
    PolicedOAuthHttp, PreregisteredClient, RegisteredClient, Revocation, STATE_LIFETIME,
    StateStore, TokenEndpointAuthMethod,
};
use switchboard_mcp_client::url_policy::UrlPolicy;
use switchboard_store::{
    AuthMode, CredentialScope, NewOAuthState, OAuthStateTake, ServerRecord, Store, StoreError,
};
use url::Url;

/// Where the flow sends people back and how Switchboard names itself.
#[derive(Clone, Debug)]
pub struct OAuthSettings {
    /// `{server.public_url}/oauth/callback`, sent exactly as registered.
    pub redirect_uri: String,
    /// `{server.public_url}/oauth/client-metadata.json`; offered as the client id only when
    /// it is `https` (authorization servers fetch it, and the draft requires HTTPS).
    pub client_metadata_url: String,
    /// Names this process in refresh-lease holders.
    pub instance: String,
}

/// Why an OAuth operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum OAuthServiceError {
    #[error("server {0} does not use OAuth (its auth mode is not `oauth`)")]
    NotOAuth(String),
    #[error("only an administrator may connect the workspace's shared account to {0}")]
    AdminOnly(String),
    #[error("server {0} has no usable URL: {1}")]
    BadUrl(String, String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    OAuth(#[from] OAuthError),
}

impl OAuthServiceError {
    /// Stable snake_case code for API answers and the callback's redirect.
    pub fn code(&self) -> &'static str {
        match self {
            OAuthServiceError::NotOAuth(_) => "not_oauth",
            OAuthServiceError::AdminOnly(_) => "admin_only",
            OAuthServiceError::BadUrl(..) => "invalid_config",
            OAuthServiceError::Store(_) => "store_error",
            OAuthServiceError::OAuth(error) => error.code(),
        }
    }
}

/// What the callback achieved, for the redirect to the UI.
#[derive(Debug)]
pub struct CallbackOutcome {
    /// The server's name when the state named one (so the UI can say which).
    pub server_name: Option<String>,
    pub result: Result<Connected, OAuthServiceError>,
}

/// A connection the callback completed: the server, and the person who started the flow (for
/// a shared server, the admin who connected the workspace).
#[derive(Debug)]
pub struct Connected {
    pub record: ServerRecord,
    pub user_id: UserId,
}

/// See the module doc. Cheap to clone.
#[derive(Clone, Debug)]
pub struct OAuthService {
    store: Store,
    http: PolicedOAuthHttp,
    settings: Arc<OAuthSettings>,
}

impl OAuthService {
    /// A service whose every OAuth request obeys `policy` (the registered servers' policy).
    pub fn new(
        store: Store,
        policy: UrlPolicy,
        settings: OAuthSettings,
    ) -> Result<Self, OAuthError> {
        Ok(Self {
            store,
            http: PolicedOAuthHttp::new(policy)?,
            settings: Arc::new(settings),
        })
    }

    /// Starts connecting `principal` (or, for a shared server, the workspace) to `server_id`;
    /// returns where to send the person.
    pub async fn authorize(
        &self,
        principal: &Principal,
        server_id: &ServerId,
    ) -> Result<String, OAuthServiceError> {
        let record = self
            .store
            .get_server(&principal.workspace_id, server_id)
            .await?;
        let shared = connection_scope(&record)? == CredentialScope::Shared;
        if shared && !principal.allows(Scope::Admin) {
            return Err(OAuthServiceError::AdminOnly(record.name.clone()));
        }
        let states = Arc::new(InMemoryStateStore::new());
        let subject = (!shared).then(|| principal.user_id.clone());
        let flow = self.flow(&record, subject, placeholder_client(), states.clone())?;
        let start = AuthorizationStart {
            redirect_uri: self.settings.redirect_uri.clone(),
            client_name: "Switchboard".to_owned(),
            preregistered: self.preregistered(&record).await?,
            client_metadata_url: self.client_metadata_url(),
            challenge: None,
            scopes: record
                .connection
                .auth
                .oauth
                .as_ref()
                .and_then(|oauth| oauth.scopes.clone()),
        };
        let pending = flow.start(start).await?;
        let authorization = states
            .load(&pending.state)
            .await
            .map_err(|error| OAuthError::Store(error.to_string()))?
            .ok_or(OAuthError::UnknownState)?;
        let payload = StatePayload {
            authorization,
            client: pending.client,
        };
        let expires_at = chrono::Utc::now()
            + chrono::TimeDelta::from_std(STATE_LIFETIME).unwrap_or(chrono::TimeDelta::minutes(10));
        self.store
            .save_oauth_state(
                &principal.workspace_id,
                NewOAuthState {
                    state_key: pending.state,
                    server_id: record.id.clone(),
                    user_id: principal.user_id.clone(),
                    shared,
                    payload: payload.to_json()?,
                    expires_at,
                },
            )
            .await?;
        Ok(pending.authorization_url)
    }

    /// Finishes a flow from its callback's parameters (see the module doc).
    pub async fn complete(&self, params: CallbackParams) -> CallbackOutcome {
        let Some(state) = params.state.clone() else {
            return failed(None, OAuthError::MissingCallbackParameter("state").into());
        };
        let taken = match self.store.take_oauth_state(&state).await {
            Ok(OAuthStateTake::Valid(taken)) => taken,
            Ok(OAuthStateTake::Expired) => return failed(None, OAuthError::StateExpired.into()),
            Ok(OAuthStateTake::Unknown) => return failed(None, OAuthError::UnknownState.into()),
            Err(error) => return failed(None, error.into()),
        };
        let record = match self
            .store
            .get_server(&taken.workspace_id, &taken.server_id)
            .await
        {
            Ok(record) => record,
            Err(error) => return failed(None, error.into()),
        };
        let name = Some(record.name.clone());
        let user_id = taken.user_id.clone();
        let result = self
            .exchange(&record, taken, &state, &params)
            .await
            .map(|()| Connected { record, user_id });
        CallbackOutcome {
            server_name: name,
            result,
        }
    }

    /// Forgets `principal`'s connection to `server_id` (the shared one for a shared server:
    /// admins only), revoking it first where the authorization server offers revocation.
    pub async fn disconnect(
        &self,
        principal: &Principal,
        server_id: &ServerId,
    ) -> Result<Revocation, OAuthServiceError> {
        let record = self
            .store
            .get_server(&principal.workspace_id, server_id)
            .await?;
        let shared = connection_scope(&record)? == CredentialScope::Shared;
        if shared && !principal.allows(Scope::Admin) {
            return Err(OAuthServiceError::AdminOnly(record.name.clone()));
        }
        let subject = (!shared).then(|| principal.user_id.clone());
        let key = self.key(&record, subject.clone());
        let probe = ConnectionCredentials::new(
            self.store.clone(),
            key,
            placeholder_client(),
            &self.settings.instance,
        );
        let Some(stored) = probe
            .payload()
            .await
            .map_err(|error| OAuthError::Store(error.to_string()))?
        else {
            return Ok(Revocation::NothingStored);
        };
        let flow = self.flow(
            &record,
            subject,
            stored.client.clone(),
            Arc::new(InMemoryStateStore::new()),
        )?;
        match flow.revoke(&stored.client).await {
            Ok(revocation) => Ok(revocation),
            Err(error) => {
                // The tokens are forgotten whatever the authorization server said.
                tracing::warn!(server = %record.name, code = error.code(), "revoking an OAuth connection at the authorization server failed; it was forgotten here");
                Ok(Revocation::NotOffered)
            }
        }
    }

    /// A valid access token of `user_id`'s connection to `record` (the shared one for a shared
    /// server), refreshed when it expires soon; `None` when there is no usable connection —
    /// nothing stored, or tokens issued for another resource than the server's URL now.
    pub async fn access_token(
        &self,
        record: &ServerRecord,
        user_id: &UserId,
    ) -> Result<Option<String>, OAuthServiceError> {
        let Some((flow, stored)) = self.connection(record, user_id).await? else {
            return Ok(None);
        };
        match flow.access_token(&stored.client).await {
            Ok(token) => Ok(Some(token)),
            Err(OAuthError::AuthorizationRequired) => Ok(None),
            Err(error) => Err(error.into()),
        }
    }

    /// After the upstream refused `rejected` (401): the connection's current token when another
    /// call already replaced it, else one refresh (under the store's refresh lease) when a
    /// refresh token is stored; `None` when the person must sign in again.
    pub async fn token_after_rejection(
        &self,
        record: &ServerRecord,
        user_id: &UserId,
        rejected: &str,
    ) -> Result<Option<String>, OAuthServiceError> {
        let Some((flow, stored)) = self.connection(record, user_id).await? else {
            return Ok(None);
        };
        if let Ok(current) = flow.stored_access_token().await
            && current != rejected
        {
            return Ok(Some(current));
        }
        let refreshable = flow
            .grant_info()
            .await?
            .is_some_and(|grant| grant.refreshable);
        if !refreshable {
            return Ok(None);
        }
        match flow.refresh(&stored.client).await {
            Ok(token) => Ok(Some(token)),
            Err(error) => {
                tracing::info!(server = %record.name, code = error.code(), "refreshing an OAuth token after a 401 failed; the person must sign in again");
                Ok(None)
            }
        }
    }

    /// The flow and stored payload of `user_id`'s connection to `record` (the shared one for a
    /// shared server), when one is stored for the server's current URL.
    async fn connection(
        &self,
        record: &ServerRecord,
        user_id: &UserId,
    ) -> Result<Option<(OAuthFlow, credentials::ConnectionPayload)>, OAuthServiceError> {
        let shared = connection_scope(record)? == CredentialScope::Shared;
        let subject = (!shared).then(|| user_id.clone());
        let probe = ConnectionCredentials::new(
            self.store.clone(),
            self.key(record, subject.clone()),
            placeholder_client(),
            &self.settings.instance,
        );
        let Some(stored) = probe
            .payload()
            .await
            .map_err(|error| OAuthError::Store(error.to_string()))?
        else {
            return Ok(None);
        };
        let resource = record
            .url
            .as_deref()
            .and_then(|url| Url::parse(url).ok())
            .map(|url| url.to_string());
        if stored.resource.is_none() || stored.resource != resource {
            // Issued for another resource: never sent to this one.
            return Ok(None);
        }
        let flow = self.flow(
            record,
            subject,
            stored.client.clone(),
            Arc::new(InMemoryStateStore::new()),
        )?;
        Ok(Some((flow, stored)))
    }

    /// The code exchange of a taken state: nothing is stored unless it succeeds.
    async fn exchange(
        &self,
        record: &ServerRecord,
        taken: switchboard_store::OAuthStateRecord,
        state: &str,
        params: &CallbackParams,
    ) -> Result<(), OAuthServiceError> {
        let payload = StatePayload::from_json(taken.payload)?;
        let states = Arc::new(InMemoryStateStore::new());
        states
            .save(state, payload.authorization)
            .await
            .map_err(|error| OAuthError::Store(error.to_string()))?;
        let subject = (!taken.shared).then_some(taken.user_id);
        let flow = self.flow(record, subject, payload.client.clone(), states)?;
        flow.finish(&payload.client, params).await?;
        Ok(())
    }

    fn flow(
        &self,
        record: &ServerRecord,
        subject: Option<UserId>,
        client: RegisteredClient,
        states: Arc<InMemoryStateStore>,
    ) -> Result<OAuthFlow, OAuthServiceError> {
        let url = record
            .url
            .as_deref()
            .ok_or_else(|| OAuthServiceError::BadUrl(record.name.clone(), "it has none".into()))
            .and_then(|url| {
                Url::parse(url).map_err(|error| {
                    OAuthServiceError::BadUrl(record.name.clone(), error.to_string())
                })
            })?;
        let credentials = ConnectionCredentials::new(
            self.store.clone(),
            self.key(record, subject),
            client,
            &self.settings.instance,
        )
        .for_resource(&url);
        Ok(OAuthFlow::new(
            url,
            self.http.clone(),
            Arc::new(credentials),
            states,
        ))
    }

    fn key(&self, record: &ServerRecord, subject: Option<UserId>) -> ConnectionKey {
        ConnectionKey {
            workspace_id: record.workspace_id.clone(),
            server_id: record.id.clone(),
            user_id: subject,
        }
    }

    /// The admin's pre-registered client, with its secret, when the server has one.
    async fn preregistered(
        &self,
        record: &ServerRecord,
    ) -> Result<Option<PreregisteredClient>, OAuthServiceError> {
        let Some(client_id) = record
            .connection
            .auth
            .oauth
            .as_ref()
            .and_then(|oauth| oauth.client_id.clone())
        else {
            return Ok(None);
        };
        let secrets = self
            .store
            .server_secrets(&record.workspace_id, &record.id)
            .await?;
        let auth_method = record
            .connection
            .auth
            .oauth
            .as_ref()
            .and_then(|oauth| oauth.token_endpoint_auth_method)
            .map(auth_method);
        Ok(Some(PreregisteredClient {
            client_id,
            client_secret: secrets.oauth_client_secret,
            auth_method,
        }))
    }

    fn client_metadata_url(&self) -> Option<String> {
        let url = &self.settings.client_metadata_url;
        url.starts_with("https://").then(|| url.clone())
    }
}

/// The server's credential scope, or why it has none (not an OAuth server).
fn connection_scope(record: &ServerRecord) -> Result<CredentialScope, OAuthServiceError> {
    let auth = &record.connection.auth;
    if auth.mode != Some(AuthMode::Oauth) {
        return Err(OAuthServiceError::NotOAuth(record.name.clone()));
    }
    Ok(auth.credential_scope)
}

fn auth_method(method: switchboard_store::TokenEndpointAuthMethod) -> TokenEndpointAuthMethod {
    match method {
        switchboard_store::TokenEndpointAuthMethod::None => TokenEndpointAuthMethod::None,
        switchboard_store::TokenEndpointAuthMethod::ClientSecretBasic => {
            TokenEndpointAuthMethod::ClientSecretBasic
        }
        switchboard_store::TokenEndpointAuthMethod::ClientSecretPost => {
            TokenEndpointAuthMethod::ClientSecretPost
        }
    }
}

/// The client a credential store saves with before registration is known (reading and
/// clearing never use it; `start` registers and the state carries the real one).
fn placeholder_client() -> RegisteredClient {
    RegisteredClient {
        client_id: String::new(),
        client_secret: None,
        auth_method: TokenEndpointAuthMethod::None,
        redirect_uri: String::new(),
        challenge: None,
    }
}

fn failed(server_name: Option<String>, error: OAuthServiceError) -> CallbackOutcome {
    CallbackOutcome {
        server_name,
        result: Err(error),
    }
}
