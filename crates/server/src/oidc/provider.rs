//! The identity provider as this process knows it: its discovery document and signing keys,
//! fetched at the first sign-in and kept, and the HTTP every request to it goes through.
//!
//! Keys rotate: an ID token signed with a key we do not have yet makes us fetch the provider's
//! JWKS again ([`Provider::refreshed`]) and verify once more; such forced fetches are at most
//! one per [`REFRESH_COOLDOWN`], so forged key ids cannot make us hammer the provider. The discovery is
//! also refetched after [`METADATA_TTL`]. Every URL — the issuer's and the ones its metadata
//! names — passes the outbound URL policy (`[mcp.url_policy]`, as admin-configured URLs do)
//! through [`PolicedOAuthHttp`], which also caps bodies and follows no cross-origin redirect.

use super::config::OidcConfig;
use openidconnect::core::CoreClient;
use openidconnect::{
    ClientId, ClientSecret, EndpointMaybeSet, EndpointNotSet, EndpointSet, HttpRequest,
    HttpResponse, IssuerUrl, ProviderMetadataWithLogout, RedirectUrl,
};
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_mcp_client::oauth::{OAuthHttpError, OAuthHttpRedirectPolicy, PolicedOAuthHttp};
use tokio::sync::Mutex;

/// How long a discovery document is trusted before it is fetched again.
pub const METADATA_TTL: Duration = Duration::from_secs(3600);
/// The shortest time between two refetches for an unknown signing key.
pub const REFRESH_COOLDOWN: Duration = Duration::from_secs(30);

/// A client of the provider, from its discovery document.
pub type OidcClient = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// The provider's metadata and a client built from it.
#[derive(Debug)]
pub struct Discovered {
    pub metadata: ProviderMetadataWithLogout,
    pub client: OidcClient,
    fetched_at: Instant,
    /// Fetched again for an unknown signing key (the cooldown counts from these only).
    forced: bool,
}

/// Why the provider could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("the issuer URL is not valid: {0}")]
    Issuer(String),
    #[error("the provider's discovery could not be read: {0}")]
    Discovery(String),
    #[error("the redirect URI is not valid: {0}")]
    Redirect(String),
}

/// The provider, discovered lazily and cached (see the module doc).
#[derive(Debug)]
pub struct Provider {
    config: Arc<OidcConfig>,
    redirect_uri: String,
    http: PolicedOAuthHttp,
    cached: Mutex<Option<Arc<Discovered>>>,
}

impl Provider {
    pub fn new(config: Arc<OidcConfig>, redirect_uri: String, http: PolicedOAuthHttp) -> Self {
        Self {
            config,
            redirect_uri,
            http,
            cached: Mutex::new(None),
        }
    }

    pub fn config(&self) -> &OidcConfig {
        &self.config
    }

    /// The async HTTP client openidconnect calls, under the URL policy, never redirected.
    pub fn http(
        &self,
    ) -> impl Fn(
        HttpRequest,
    ) -> std::pin::Pin<
        Box<dyn Future<Output = Result<HttpResponse, OAuthHttpError>> + Send>,
    > + use<> {
        let http = self.http.for_operation();
        move |request| {
            let http = http.clone();
            Box::pin(async move { http.send(request, OAuthHttpRedirectPolicy::Stop).await })
        }
    }

    /// The provider's metadata and client, fetched when missing or older than [`METADATA_TTL`].
    pub async fn discovered(&self) -> Result<Arc<Discovered>, ProviderError> {
        let mut cached = self.cached.lock().await;
        if let Some(discovered) = cached.as_ref()
            && discovered.fetched_at.elapsed() < METADATA_TTL
        {
            return Ok(discovered.clone());
        }
        let discovered = Arc::new(self.discover().await?);
        *cached = Some(discovered.clone());
        Ok(discovered)
    }

    /// The metadata and keys fetched again (a signing key we did not know), unless `seen` was
    /// itself such a fetch less than [`REFRESH_COOLDOWN`] ago; `None` then.
    pub async fn refreshed(
        &self,
        seen: &Discovered,
    ) -> Result<Option<Arc<Discovered>>, ProviderError> {
        let mut cached = self.cached.lock().await;
        if let Some(current) = cached.as_ref()
            && current.fetched_at > seen.fetched_at
        {
            return Ok(Some(current.clone()));
        }
        if seen.forced && seen.fetched_at.elapsed() < REFRESH_COOLDOWN {
            return Ok(None);
        }
        let mut discovered = self.discover().await?;
        discovered.forced = true;
        let discovered = Arc::new(discovered);
        *cached = Some(discovered.clone());
        Ok(Some(discovered))
    }

    async fn discover(&self) -> Result<Discovered, ProviderError> {
        let issuer = IssuerUrl::new(self.config.issuer.clone())
            .map_err(|error| ProviderError::Issuer(error.to_string()))?;
        let http = self.http();
        let metadata = ProviderMetadataWithLogout::discover_async(issuer, &http)
            .await
            .map_err(|error| ProviderError::Discovery(error_chain(&error)))?;
        let redirect = RedirectUrl::new(self.redirect_uri.clone())
            .map_err(|error| ProviderError::Redirect(error.to_string()))?;
        let client = CoreClient::from_provider_metadata(
            metadata.clone(),
            ClientId::new(self.config.client_id.clone()),
            self.config
                .client_secret
                .as_ref()
                .map(|secret| ClientSecret::new(secret.expose().to_owned())),
        )
        .set_redirect_uri(redirect);
        Ok(Discovered {
            metadata,
            client,
            fetched_at: Instant::now(),
            forced: false,
        })
    }
}

/// An error and its causes on one line (openidconnect's errors keep the reason in `source`).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}
