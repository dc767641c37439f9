//! OAuth tokens on the way to an upstream (issue 11): the upstream of a server whose auth mode
//! is `oauth` carries the bearer of the caller's own connection (`per_user`, with per-user
//! sessions, so one person's token never serves another) or of the workspace's shared one
//! (one shared session). Without a usable connection the server is unavailable to that caller
//! only, with the code [`NEEDS_AUTH`]; without a caller a per-user server is never contacted
//! (the background refresh skips it). The token comes from [`OAuthService::access_token`],
//! which refreshes it ahead of expiry and sends it only to the resource it was issued for; a
//! 401 to it gets one refresh and one retry ([`ServerRegistry::retrying_refused_token`]).

use super::oauth::OAuthService;
use super::{RegistryError, ServerRegistry};
use switchboard_core::{SessionScope, UserId};
use switchboard_mcp_client::UpstreamError;
use switchboard_mcp_client::server::{UpstreamEndpoint, UpstreamServer};
use switchboard_store::{AuthMode, CredentialScope, ServerRecord};

/// The error code of a server the caller must connect (sign in to) first.
pub const NEEDS_AUTH: &str = "needs_auth";

/// Whether `record` authenticates with OAuth.
pub fn uses_oauth(record: &ServerRecord) -> bool {
    record.connection.auth.mode == Some(AuthMode::Oauth)
}

/// Whether each person connects their own account to `record`.
pub fn is_per_user_oauth(record: &ServerRecord) -> bool {
    uses_oauth(record) && record.connection.auth.credential_scope == CredentialScope::PerUser
}

/// Whether `record`'s connections are built per caller (user fields or per-user OAuth): never
/// contacted without a caller, with per-user sessions.
pub fn is_per_caller(record: &ServerRecord) -> bool {
    crate::has_user_fields(record) || is_per_user_oauth(record)
}

/// What [`ServerRegistry::retrying_refused_token`] ended with.
#[derive(Debug)]
pub struct Attempted<T> {
    /// The last attempt's outcome.
    pub outcome: Result<T, UpstreamError>,
    /// Why a refused token could not be replaced (the person must sign in again, the store
    /// failed…), when that is how it ended.
    pub renewal_error: Option<RegistryError>,
}

impl<T> Attempted<T> {
    /// The outcome, or the reason the refused token could not be replaced.
    pub fn or_renewal_error(self) -> Result<Result<T, UpstreamError>, RegistryError> {
        match self.renewal_error {
            Some(error) => Err(error),
            None => Ok(self.outcome),
        }
    }
}

impl ServerRegistry {
    /// Lets the upstreams of `oauth` servers carry their connections' tokens. Set once (later
    /// calls are ignored).
    pub fn set_oauth(&self, service: OAuthService) {
        let _ = self.inner.oauth.set(service);
    }

    /// `upstream` with the bearer of the connection that serves `user` on `record`, when
    /// `record` uses OAuth; unchanged otherwise.
    pub(crate) async fn with_oauth_token(
        &self,
        record: &ServerRecord,
        mut upstream: UpstreamServer,
        user: Option<&UserId>,
    ) -> Result<UpstreamServer, RegistryError> {
        if !uses_oauth(record) {
            return Ok(upstream);
        }
        let subject = self.oauth_subject(record, user)?;
        let service = self.oauth_service(record)?;
        let token = service
            .access_token(record, &subject)
            .await?
            .ok_or_else(|| needs_auth(record))?;
        with_bearer(record, &mut upstream, token)?;
        Ok(upstream)
    }

    /// After `rejected` (an upstream built by [`Self::upstream_as`]) was answered 401: the
    /// same upstream with a replaced token — another call's refresh, or one refresh now under
    /// the store's lease — or [`RegistryError::NeedsAuth`] when the person must sign in again.
    /// Only for servers using OAuth; other servers' refusals stand.
    async fn upstream_after_rejection(
        &self,
        record: &ServerRecord,
        rejected: &UpstreamServer,
        user: Option<&UserId>,
    ) -> Result<UpstreamServer, RegistryError> {
        let rejected_token = match &rejected.endpoint {
            UpstreamEndpoint::Remote(remote) if uses_oauth(record) => remote.api_key.as_deref(),
            _ => None,
        }
        .ok_or_else(|| needs_auth(record))?;
        let subject = self.oauth_subject(record, user)?;
        let token = self
            .oauth_service(record)?
            .token_after_rejection(record, &subject, rejected_token)
            .await?
            .ok_or_else(|| needs_auth(record))?;
        let mut upstream = rejected.clone();
        with_bearer(record, &mut upstream, token)?;
        Ok(upstream)
    }

    /// Runs `attempt` on `upstream` (built by [`Self::upstream_as`]); when `record` uses OAuth
    /// and the upstream refused the token (the request never ran), runs it once more with a
    /// replaced token. Every path that contacts an OAuth upstream for a person goes through
    /// here or [`Self::retry_if_token_refused`], so "401 → refresh → retry once" is written
    /// once. When no new token can be had, the refusal stands and [`Attempted`] says why.
    /// (`attempt` takes the upstream by value: a closure whose future borrows its argument
    /// would not be `Send`.)
    pub async fn retrying_refused_token<T, Attempt, Running>(
        &self,
        record: &ServerRecord,
        upstream: &UpstreamServer,
        user: Option<&UserId>,
        attempt: Attempt,
    ) -> Attempted<T>
    where
        Attempt: Fn(UpstreamServer) -> Running,
        Running: Future<Output = Result<T, UpstreamError>>,
    {
        let first = attempt(upstream.clone()).await;
        self.retry_if_token_refused(record, upstream, user, first, attempt)
            .await
    }

    /// The second half of [`Self::retrying_refused_token`], for a caller that made the first
    /// attempt before it had `record` (the chat reads the record only after a refusal):
    /// `first` stands unless it is a refused token of an OAuth server, in which case `attempt`
    /// runs once more with the token another call renewed or one refreshed now.
    pub async fn retry_if_token_refused<T, Attempt, Running>(
        &self,
        record: &ServerRecord,
        upstream: &UpstreamServer,
        user: Option<&UserId>,
        first: Result<T, UpstreamError>,
        attempt: Attempt,
    ) -> Attempted<T>
    where
        Attempt: Fn(UpstreamServer) -> Running,
        Running: Future<Output = Result<T, UpstreamError>>,
    {
        if !(matches!(first, Err(UpstreamError::AuthRequired { .. })) && uses_oauth(record)) {
            return Attempted {
                outcome: first,
                renewal_error: None,
            };
        }
        match self.upstream_after_rejection(record, upstream, user).await {
            Ok(renewed) => Attempted {
                outcome: attempt(renewed).await,
                renewal_error: None,
            },
            Err(error) => Attempted {
                outcome: first,
                renewal_error: Some(error),
            },
        }
    }

    /// Whose connection serves `user` on `record`: theirs (per-user), the workspace's (shared).
    fn oauth_subject(
        &self,
        record: &ServerRecord,
        user: Option<&UserId>,
    ) -> Result<UserId, RegistryError> {
        match (is_per_user_oauth(record), user) {
            (true, Some(user)) => Ok(user.clone()),
            (true, None) => Err(needs_auth(record)),
            // Shared: the subject is not used to find the connection.
            (false, user) => Ok(user
                .cloned()
                .unwrap_or_else(|| UserId::from(crate::sync::SYNC_USER))),
        }
    }

    fn oauth_service(&self, record: &ServerRecord) -> Result<&OAuthService, RegistryError> {
        self.inner.oauth.get().ok_or_else(|| needs_auth(record))
    }
}

fn needs_auth(record: &ServerRecord) -> RegistryError {
    RegistryError::NeedsAuth {
        server: record.name.clone(),
    }
}

/// Puts `token` as the only `Authorization` of a remote upstream; per-user sessions for a
/// per-user connection.
fn with_bearer(
    record: &ServerRecord,
    upstream: &mut UpstreamServer,
    token: String,
) -> Result<(), RegistryError> {
    let UpstreamEndpoint::Remote(remote) = &mut upstream.endpoint else {
        return Err(RegistryError::Config(
            switchboard_mcp_client::server::ServerConfigError::new(
                "auth.mode",
                "OAuth needs a remote (HTTP) server",
            ),
        ));
    };
    remote
        .headers
        .retain(|name, _| !name.eq_ignore_ascii_case("authorization"));
    remote.api_key = Some(token);
    if is_per_user_oauth(record) {
        upstream.session_scope = SessionScope::PerUser;
    }
    Ok(())
}
